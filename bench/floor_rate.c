/* The throughput floor for `nse serve`: how many fork+exec+wait4 of bench/floor.c these cores sustain, each
 * child fed a payload on a stdin pipe, with WORKERS spawns in flight (one thread each, as nse serve's worker pool).
 *
 *   floor_rate FLOOR_BINARY PAYLOAD_FILE WORKERS SECONDS
 *
 * Prints one JSON line: {"workers","spawns","seconds","per_second","cpu_ms_per_spawn"}, where the CPU is
 * this process's own plus its reaped children's (user + system), divided by the spawns.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

extern char **environ;

static const char *floor_path;
static char *payload;
static size_t payload_size;
static double end_at;
static long total_spawns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int spawn_one(void) {
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    char *argv[] = {(char *)floor_path, NULL};
    pid_t pid;
    int status = posix_spawn(&pid, floor_path, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    if (status != 0) {
        close(in[1]);
        return -1;
    }
    size_t written = 0;
    while (written < payload_size) {
        ssize_t n = write(in[1], payload + written, payload_size - written);
        if (n <= 0) break;
        written += (size_t)n;
    }
    close(in[1]);
    int wstatus;
    struct rusage usage;
    if (wait4(pid, &wstatus, 0, &usage) != pid || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return -1;
    return 0;
}

static void *worker(void *unused) {
    (void)unused;
    long count = 0;
    while (now() < end_at) {
        if (spawn_one() != 0) {
            fprintf(stderr, "floor_rate: spawn failed\n");
            exit(1);
        }
        count++;
    }
    pthread_mutex_lock(&lock);
    total_spawns += count;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: floor_rate FLOOR_BINARY PAYLOAD_FILE WORKERS SECONDS\n");
        return 2;
    }
    floor_path = argv[1];
    FILE *file = fopen(argv[2], "rb");
    if (!file) {
        perror(argv[2]);
        return 2;
    }
    payload = malloc(1 << 16);
    payload_size = fread(payload, 1, 1 << 16, file);
    fclose(file);
    int workers = atoi(argv[3]);
    double seconds = atof(argv[4]);
    if (workers < 1 || seconds <= 0) return 2;

    pthread_t threads[256];
    if (workers > 256) workers = 256;
    double start = now();
    end_at = start + seconds;
    for (int i = 0; i < workers; i++) pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < workers; i++) pthread_join(threads[i], NULL);
    double elapsed = now() - start;

    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    double cpu_ms = (self.ru_utime.tv_sec + children.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_stime.tv_sec) * 1e3 +
                    (self.ru_utime.tv_usec + children.ru_utime.tv_usec + self.ru_stime.tv_usec + children.ru_stime.tv_usec) / 1e3;
    printf("{\"workers\":%d,\"spawns\":%ld,\"seconds\":%.3f,\"per_second\":%.1f,\"cpu_ms_per_spawn\":%.4f}\n", workers,
           total_spawns, elapsed, total_spawns / elapsed, total_spawns ? cpu_ms / total_spawns : 0.0);
    return 0;
}
