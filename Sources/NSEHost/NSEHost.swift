// NSEHost: "iOS". Decides whether the extension runs, runs it in a fresh process or a warm one per device under
// iOS's limits (budget, expiry notice, grace, memory footprint, start time), applies Apple's content rules to what
// comes back, launches the app for a call, and builds the result once. Rules are pure state machines; one driver
// does the I/O. No command-line code (that is NSECommandLine's): `nse run`, `nse serve` and replay call it alike.
//
// Files and folders:
//   NotificationHost     `deliver(_:pushType:source:collapseID:keptContent:keepContent:)`: intake, decide, run the
//                        extension, judge, make the result once; reads the way iOS decides
//   NotificationResult   the verdict's document (docs/result.md), JSON or text
//   Timings              the result's `timings_ms`, on one clock per push
//   Extension/           ExtensionMachine (one process's life as iOS rules it: events in, actions out, times in the
//                        events), ExtensionProcess (its lines and writes), ExtensionLauncher (a request in a fresh or
//                        warm process), ExtensionRun (the record of it), ContentRules (the verdict),
//                        ExtensionHandover (what a recording host keeps before `content-accepted`), ExtensionLimits,
//                        ExtensionProcessPool (warm processes, evicted when idle or dead)
//   Process/             ProcessDriver (posix_spawn, pipes, poll, /proc, wait4 for any ProcessMachine), ChildProcess
//                        (its own process group, pidfd through CProcessHandle), MemorySample (iOS's footprint:
//                        anonymous resident plus swapped, from /proc/PID/status), HostShutdown (a self-pipe telling the
//                        children able to outlive a push, the app's call, that the host is stopping)
//   App/                 AppLauncher (the app's VoIP handler under AppHandlerMachine; strikes), AppCall (runs
//                        `nse-app` under AppCallMachine, timing each step), CallRecord (the result's `call`),
//                        BuiltInApp, MainAppProcess (`nse app` as a child, for replay)
