// NSEOSLog: Apple's unified logging API (`Logger`, `os_log`, `OSLog`) as an iOS Notification Service Extension uses
// it, on Linux (docs/sdk.md). Extensions import it as `os` (the overlay `nse extension build` compiles from SDK/os);
// the module itself has another name because a package module named `os` would answer every dependency's
// `#if canImport(os)` (SDK/README.md).
//
// A developer's `NotificationService.swift` compiles unchanged with `import os`, `import os.log` or `import OSLog`:
// the same types, signatures, labels and defaults as Apple's os.swiftinterface (iOS 17 SDK), and the same strictness
// (`logger.info(someString)` does not compile: a Logger takes only a message literal).
//
// Where a message goes: one line on standard error (the host keeps an extension's stderr tail, docs/protocol.md):
//
//     <subsystem>/<category> <level>: <message>
//
// `-` stands for an empty subsystem or category (`OSLog.default`, `Logger()`); the level is the stored type's name
// as Apple's `log` tool prints it: `debug`, `info`, `default`, `error`, `fault` (so `notice` prints `default`,
// `warning` `error`, `critical` `fault`, `trace` `debug`, as Apple stores them). Control characters in any part
// become spaces (NSESystem's `Text.oneLine`), so a message is always exactly one line.
//
// Which levels print: `NSE_OSLOG_LEVEL` = `debug` | `info` | `default` (unset: `default`) | `error` | `fault`, the
// lowest level written. Apple's default configuration persists `default`, `error` and `fault` and keeps neither
// `info` nor `debug`, so by default nse prints what a device's log would keep. A message below the level costs no
// formatting: its arguments (autoclosures, as on Apple) are never evaluated.
//
// Privacy, as Apple's log shows a message with no logging profile installed (nse's rule is that plaintext never
// reaches a log):
//   - `.public`: the value as it is.
//   - `.private`, `.sensitive`: `<private>`.
//   - `.auto` (the default): numbers and Booleans are shown; strings, objects, errors and type names are `<private>`.
//   - a `mask: .hash` on a value that is not shown: `<mask.hash: 'BASE64'>`, the first 16 bytes of SHA-256 over a
//     salt and the value's text, in base64 (the shape of Apple's). The salt is the machine's boot id
//     (/proc/sys/kernel/random/boot_id), so a value hashes alike in every extension run until the next boot and
//     differently after, and no table of precomputed hashes reverses it; Apple does not document its salt.
//   - `os_log`'s format strings: `%{public}`, `%{private}`, `%{sensitive}` and `mask.hash` decide; without them `%@`
//     and `%s` are private and the numeric conversions (`%d`, `%u`, `%x`, `%f`, `%c`, `%p`…) are shown, as on Apple.
//
// Beside logging, the rest of `os` that extensions call: `os_unfair_lock` and `os_proc_available_memory()` (C, as
// Apple's: CAppleOS, re-exported here) and `OSAllocatedUnfairLock` (Lock/).
//
// Not here, and so a compile error rather than a silent no-op (docs/sdk.md): signposts (`os_signpost`,
// `OSSignposter`, `OSSignpostID`, `signpostsEnabled`), activities and `os_workgroup`, the
// extended integer formats (`OSLogInt32ExtendedFormat`, `OSLogIntExtendedFormat`) and the
// pointer interpolations (`OSLogPointerFormat`), whose rendering is Apple's private decoders'.

@_exported public import CAppleOS
