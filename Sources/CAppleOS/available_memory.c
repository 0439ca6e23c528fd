#include "apple_os.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The kilobytes after `name` in /proc/self/status's text; 0 when absent (RssAnon before Linux 4.5).
static long status_kilobytes(const char *status, const char *name) {
    const char *found = strstr(status, name);
    return found ? strtol(found + strlen(name), NULL, 10) : 0;
}

size_t os_proc_available_memory(void) {
    const char *setting = getenv("NSE_MEMORY_LIMIT_KB");
    long limit = setting ? strtol(setting, NULL, 10) : 0;
    if (limit <= 0) return 0;
    char status[8192];
    int descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return 0;
    size_t length = 0;
    while (length < sizeof status - 1) {
        ssize_t count = read(descriptor, status + length, sizeof status - 1 - length);
        if (count <= 0) break;
        length += (size_t)count;
    }
    close(descriptor);
    status[length] = 0;
    long used = status_kilobytes(status, "\nRssAnon:") + status_kilobytes(status, "\nVmSwap:");
    return used >= limit ? 0 : (size_t)(limit - used) * 1024;
}
