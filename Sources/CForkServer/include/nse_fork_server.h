#ifndef NSE_FORK_SERVER_H
#define NSE_FORK_SERVER_H

#include <stddef.h>
#include <stdint.h>

// The fork server (`--extension-launch fork`, docs/protocol.md "Launching by fork"): an extension process that has
// started and done its one-time work forks a fresh process for each push, instead of the host exec'ing the binary
// again. Both ends are here, in C: the server's loop runs between fork()s and must touch nothing the Swift runtime
// might lock; the host's side passes descriptors (SCM_RIGHTS), which Swift cannot spell. Only
// fixed-width types here: the system headers stay in fork_server.c, out of the Swift modules that import this.
//
// The link is a SOCK_SEQPACKET pair: one message per request and per reply, never split or merged.
//   host -> server: a request, the child's stdin, stdout and stderr as SCM_RIGHTS, and its environment entries
//                   ("NAME=value", each NUL-terminated) as the data.
//   server -> host: NSE_FORK_READY once (the server's pid), NSE_FORK_SPAWNED per request (the child's pid, or
//                   -errno), NSE_FORK_EXITED per child that ended (what wait4 said).

enum {
    NSE_FORK_READY = 1,
    NSE_FORK_SPAWNED = 2,
    NSE_FORK_EXITED = 3,
    NSE_FORK_REFUSED = 4,
};

/// NSE_FORK_READY's flags: the children need the environment the server itself was started with (a program that
/// reads its environment once, as it starts: Foundation's preferences folder), so a server serves one environment.
#define NSE_FORK_ENVIRONMENT_AT_START 1

/// Environment data of one request, at most.
#define NSE_FORK_ENVIRONMENT_MAX 16384

/// One reply of the server.
typedef struct {
    int32_t kind;
    /// NSE_FORK_READY: the server; NSE_FORK_SPAWNED: the child, or -errno; NSE_FORK_EXITED: the child that ended;
    /// NSE_FORK_REFUSED: -errno (the server cannot fork safely and has stopped).
    int32_t pid;
    /// NSE_FORK_EXITED: the wait status; NSE_FORK_READY: its flags (NSE_FORK_ENVIRONMENT_AT_START).
    int32_t status;
    int32_t reserved;
    /// NSE_FORK_EXITED: wait4's peak resident set (KB) and CPU times (microseconds).
    int64_t max_rss_kb;
    int64_t user_us;
    int64_t system_us;
} nse_fork_reply;

/// The server's loop on descriptor `sock`. Returns 0 in each forked child (which then goes on as a freshly started
/// extension would); in the server it never returns: it exits 0 when the host closes the link, 70 on a link error.
/// Returns -1 (errno set) when the server cannot start: another thread runs, or SIGCHLD cannot be watched (the host
/// was told).
int nse_fork_server_run(int sock, int32_t flags);

/// The host's side: asks the server on `sock` for a child with `fds` (stdin, stdout, stderr) and `environment`
/// (`length` bytes of NUL-terminated "NAME=value" entries). 0, or -1 with errno set.
int nse_fork_request(int sock, const int fds[3], const char *environment, size_t length);

/// The host's side: the next reply, blocking. 1, 0 when the server has gone, -1 with errno set.
int nse_fork_receive(int sock, nse_fork_reply *reply);

/// Whether `path` is an ELF file holding the bytes of `marker` (a binary with a fork server holds the name of its
/// environment variable): 1, or 0 (not one, or unreadable). Reads through a mapping, never runs the file.
int nse_fork_marked(const char *path, const char *marker);

/// A SOCK_SEQPACKET pair, both ends closed on exec (the host dups its end for the server onto descriptor 3).
int nse_fork_socketpair(int ends[2]);

#endif
