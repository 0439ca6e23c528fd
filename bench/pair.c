/* The floor for host + extension: a C program that fork-execs another, as `nse run` starts its extension.
 *
 *   pair CHILD
 *
 * Reads the payload on its stdin, fork+execs CHILD (bench/floor.c) with pipes on the child's stdin and stdout,
 * writes the payload to the child, reads the child's stdout to its end, reaps it with wait4 and prints one line.
 * Everything `nse run` does besides its own work: two process starts, two pipes, one reap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char payload[1 << 16];

static void fail(const char *what) {
    perror(what);
    exit(70);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: pair CHILD\n");
        return 64;
    }
    size_t size = 0;
    ssize_t got;
    while (size < sizeof payload && (got = read(0, payload + size, sizeof payload - size)) > 0) size += (size_t)got;

    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) fail("pipe");
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]);
        close(to_child[1]);
        close(from_child[0]);
        close(from_child[1]);
        char *child_argv[] = {argv[1], NULL};
        execv(argv[1], child_argv);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    for (size_t written = 0; written < size;) {
        ssize_t put = write(to_child[1], payload + written, size - written);
        if (put <= 0) fail("write");
        written += (size_t)put;
    }
    close(to_child[1]);
    char buffer[4096];
    while (read(from_child[0], buffer, sizeof buffer) > 0) {
    }
    close(from_child[0]);
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid) fail("wait4");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "pair: the child did not exit 0\n");
        return 70;
    }
    printf("{\"outcome\":\"done\"}\n");
    return 0;
}
