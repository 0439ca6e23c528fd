// NSESystem: the POSIX layer under every module, without Foundation (the per-notification processes link none).
//
// Files:
//   FileSystem, Path        files (atomic writes, stamps the caches check, permissions) and path arithmetic
//   DirectoryWatch          which of many folders had one named file changed, as inotify tells (no stat of each)
//   SystemClock             monotonic ns, Unix ms, RFC 3339: times without Foundation
//   Environment, Processes  the environment, stdout/stderr; whether a pid still runs (a claim's owner alive?)
//   Threads                 blocking work on a thread of its own, off the cooperative pool
//   ASCII                   the one lowercasing of protocol text (SIP/HTTP header names, URI schemes, push parameters)
//   Text                    one line for a log or an error: a quoted value can never forge a second line
//   SystemError             an OS call that failed, with its operation and path
//   NetworkFailure          a socket failure as a user reads it: what, where, why in a few words
