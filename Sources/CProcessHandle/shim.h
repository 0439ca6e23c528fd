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

// Closes every descriptor from `low` up in the spawned child (glibc 2.34's posix_spawn_file_actions_addclosefrom_np,
// which Swift's Glibc module does not declare): a host's descriptor opened without close-on-exec by a library must
// not live on in an extension. Declared weak, so a C library without it links and the call says ENOSYS.
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int) __attribute__((weak));

static inline int nse_spawn_close_from(posix_spawn_file_actions_t *actions, int low) {
    if (posix_spawn_file_actions_addclosefrom_np == NULL) return ENOSYS;
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}

#endif
