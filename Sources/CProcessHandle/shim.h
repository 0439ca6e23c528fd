#ifndef NSE_CPROCESSHANDLE_SHIM_H
#define NSE_CPROCESSHANDLE_SHIM_H

#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

// A process file descriptor (Linux 5.3): readable once the process has exited, so a host can wait for a child's
// exit in poll() beside its pipes, without SIGCHLD or sleeping. glibc declares pidfd_open only from 2.36 and Swift's
// Glibc module does not include <sys/pidfd.h>: the system call itself, made here (syscall() is variadic, which
// Swift cannot call).

/// A descriptor for process `pid`, closed on exec; -1 with errno set (ENOSYS before Linux 5.3).
static inline int nse_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    return fd;
#else
    errno = ENOSYS;
    return -1;
#endif
}

#endif
