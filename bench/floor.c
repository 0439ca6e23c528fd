/* The floor every per-notification process is measured against: fork+exec of a C program that reads its stdin. */
#include <unistd.h>

int main(void) {
    char buffer[8192];
    while (read(0, buffer, sizeof buffer) > 0) {
    }
    return 0;
}
