// The fork server's two ends (include/nse_fork_server.h says what each does).
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "nse_fork_server.h"

static int nse_fork_send_reply(int sock, const nse_fork_reply *reply) {
    ssize_t sent;
    do {
        sent = send(sock, reply, sizeof *reply, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent == (ssize_t)sizeof *reply ? 0 : -1;
}

/// Threads of this process: fork() copies only the calling one, so a lock another held stays locked forever in
/// the child. The server forks only while it is alone.
static int nse_fork_thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

/// Reaps every child that has ended and tells the host.
static void nse_fork_reap(int sock) {
    for (;;) {
        int status = 0;
        struct rusage usage;
        memset(&usage, 0, sizeof usage);
        pid_t pid = wait4(-1, &status, WNOHANG, &usage);
        if (pid < 0 && errno == EINTR) continue;
        if (pid <= 0) return;
        nse_fork_reply reply;
        memset(&reply, 0, sizeof reply);
        reply.kind = NSE_FORK_EXITED;
        reply.pid = pid;
        reply.status = status;
        reply.max_rss_kb = usage.ru_maxrss;
        reply.user_us = (int64_t)usage.ru_utime.tv_sec * 1000000 + usage.ru_utime.tv_usec;
        reply.system_us = (int64_t)usage.ru_stime.tv_sec * 1000000 + usage.ru_stime.tv_usec;
        nse_fork_send_reply(sock, &reply);
    }
}

/// In the child: the request's descriptors on 0, 1 and 2, its own process group, the signal mask the server had
/// before it blocked SIGCHLD, the request's environment.
static void nse_fork_become_child(int sock, int events, const int fds[3], char *environment, size_t length,
                                         const sigset_t *mask) {
    close(sock);
    close(events);
    for (int target = 0; target < 3; target++) {
        if (fds[target] != target) dup2(fds[target], target);
    }
    for (int index = 0; index < 3; index++) {
        if (fds[index] > 2) {
            int duplicate = 0;
            for (int other = 0; other < index; other++) duplicate |= fds[other] == fds[index];
            if (!duplicate) close(fds[index]);
        }
    }
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, mask, NULL);
    size_t offset = 0;
    while (offset < length) {
        char *entry = environment + offset;
        size_t size = strnlen(entry, length - offset);
        offset += size + 1;
        char *equals = memchr(entry, '=', size);
        if (equals == NULL || equals == entry) continue;
        *equals = '\0';
        setenv(entry, equals + 1, 1);
        *equals = '=';
    }
}

int nse_fork_server_run(int sock, int32_t flags) {
    nse_fork_reply reply;
    memset(&reply, 0, sizeof reply);
    int threads = nse_fork_thread_count();
    if (threads != 1) {
        reply.kind = NSE_FORK_REFUSED;
        reply.pid = threads < 0 ? -errno : -EBUSY;
        nse_fork_send_reply(sock, &reply);
        errno = threads < 0 ? errno : EBUSY;
        return -1;
    }
    sigset_t children, previous;
    sigemptyset(&children);
    sigaddset(&children, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &children, &previous) != 0) return -1;
    int events = signalfd(-1, &children, SFD_NONBLOCK | SFD_CLOEXEC);
    if (events < 0) {
        int error = errno;
        sigprocmask(SIG_SETMASK, &previous, NULL);
        reply.kind = NSE_FORK_REFUSED;
        reply.pid = -error;
        nse_fork_send_reply(sock, &reply);
        errno = error;
        return -1;
    }
    reply.kind = NSE_FORK_READY;
    reply.pid = getpid();
    reply.status = flags;
    if (nse_fork_send_reply(sock, &reply) != 0) _exit(0);

    static char environment[NSE_FORK_ENVIRONMENT_MAX];
    for (;;) {
        struct pollfd watched[2] = {{.fd = sock, .events = POLLIN}, {.fd = events, .events = POLLIN}};
        int ready = poll(watched, 2, -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            _exit(70);
        }
        if (watched[1].revents) {
            struct signalfd_siginfo info;
            while (read(events, &info, sizeof info) == (ssize_t)sizeof info) {
            }
            nse_fork_reap(sock);
        }
        if (!watched[0].revents) continue;
        union {
            struct cmsghdr header;
            char space[CMSG_SPACE(3 * sizeof(int))];
        } control;
        memset(&control, 0, sizeof control);
        struct iovec data = {.iov_base = environment, .iov_len = sizeof environment - 1};
        struct msghdr message = {0};
        message.msg_iov = &data;
        message.msg_iovlen = 1;
        message.msg_control = control.space;
        message.msg_controllen = sizeof control.space;
        ssize_t received = recvmsg(sock, &message, MSG_CMSG_CLOEXEC);
        if (received < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            _exit(70);
        }
        // The host closed the link (every request carries at least one byte): the server's work is done.
        if (received == 0) _exit(0);
        int fds[3] = {-1, -1, -1};
        int count = 0;
        for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL;
             header = CMSG_NXTHDR(&message, header)) {
            if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
            int carried = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            int *given = (int *)CMSG_DATA(header);
            for (int index = 0; index < carried; index++) {
                if (count < 3) fds[count++] = given[index];
                else close(given[index]);
            }
        }
        memset(&reply, 0, sizeof reply);
        reply.kind = NSE_FORK_SPAWNED;
        if (count != 3 || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
            for (int index = 0; index < count; index++) close(fds[index]);
            reply.pid = -EINVAL;
            nse_fork_send_reply(sock, &reply);
            continue;
        }
        environment[received] = '\0';
        pid_t child = fork();
        if (child == 0) {
            nse_fork_become_child(sock, events, fds, environment, (size_t)received, &previous);
            return 0;
        }
        int error = errno;
        // The child makes its own group too, but the host may signal the group before the child has run: both
        // sides set it, as a shell does for a job, so the group exists when the host learns the pid.
        if (child > 0) setpgid(child, child);
        for (int index = 0; index < 3; index++) close(fds[index]);
        reply.pid = child < 0 ? -error : child;
        nse_fork_send_reply(sock, &reply);
    }
}

int nse_fork_request(int sock, const int fds[3], const char *environment, size_t length) {
    if (length > NSE_FORK_ENVIRONMENT_MAX - 1) {
        errno = E2BIG;
        return -1;
    }
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(3 * sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    // A request with no environment still carries a byte: a zero-length seqpacket reads as the link's end.
    static const char empty = '\0';
    struct iovec data = {.iov_base = (void *)(length > 0 ? environment : &empty), .iov_len = length > 0 ? length : 1};
    struct msghdr message = {0};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control.space;
    message.msg_controllen = sizeof control.space;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(3 * sizeof(int));
    memcpy(CMSG_DATA(header), fds, 3 * sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(sock, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -1 : 0;
}

int nse_fork_receive(int sock, nse_fork_reply *reply) {
    ssize_t received;
    do {
        received = recv(sock, reply, sizeof *reply, 0);
    } while (received < 0 && errno == EINTR);
    if (received == 0) return 0;
    if (received != (ssize_t)sizeof *reply) {
        if (received >= 0) errno = EPROTO;
        return -1;
    }
    return 1;
}

int nse_fork_socketpair(int ends[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends);
}

int nse_fork_marked(const char *path, const char *marker) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 4) {
        close(fd);
        return 0;
    }
    size_t size = (size_t)info.st_size;
    void *mapped = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (mapped == MAP_FAILED) return 0;
    int found = memcmp(mapped, "\x7f" "ELF", 4) == 0 && memmem(mapped, size, marker, strlen(marker)) != NULL;
    munmap(mapped, size);
    return found;
}
