#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Apple's classic `os_log` (iOS 10): a printf-style format with os_log's privacy decorations
/// (`"decrypt failed: %{public}@"`) and its arguments.
///
/// nse formats the arguments itself (`FormatString`), never through C varargs: `%@` takes any object or string
/// (`NSObject`'s `CVarArg` conformance, NSObject+CVarArg.swift), `%s` a string, the numeric conversions numbers.
/// Without a decoration `%@` and `%s` are `<private>` and numbers are shown, as on Apple. `dso` (which image logged,
/// for Apple's tools) is accepted and not used: nse's line names no image.
// swift-format-ignore: AlwaysUseLowerCamelCase
public func os_log(
    _ message: StaticString, dso: UnsafeRawPointer? = #dsohandle, log: OSLog = .default, type: OSLogType = .default,
    _ args: any CVarArg...
) {
    writeClassic(message, log: log, type: type, args, errno: errno)
}

/// Apple's classic `os_log` with the level first (iOS 12): `os_log(.error, log: log, "x %d", 3)`.
// swift-format-ignore: AlwaysUseLowerCamelCase
public func os_log(
    _ type: OSLogType, dso: UnsafeRawPointer = #dsohandle, log: OSLog = .default, _ message: StaticString,
    _ args: any CVarArg...
) {
    writeClassic(message, log: log, type: type, args, errno: errno)
}

/// Apple's `os_log` taking an interpolated `OSLogMessage` (iOS 14), at level `default` on `OSLog.default`: as a
/// `Logger`'s `log(_:)`.
// swift-format-ignore: AlwaysUseLowerCamelCase
@_disfavoredOverload
public func os_log(_ message: OSLogMessage) {
    Logger(.default).log(message)
}

/// Apple's `os_log` taking an interpolated `OSLogMessage` (iOS 14), with a level and a handle.
// swift-format-ignore: AlwaysUseLowerCamelCase
@_disfavoredOverload
public func os_log(_ logLevel: OSLogType = .default, log logObject: OSLog = .default, _ message: OSLogMessage) {
    Logger(logObject).log(level: logLevel, message)
}

/// Formats and writes a classic message; `errno` is the caller's, read before anything here could change it (`%m`).
private func writeClassic(
    _ message: StaticString, log: OSLog, type: OSLogType, _ args: [any CVarArg], errno: Int32
) {
    guard log.isEnabled(type: type) else { return }
    let format = message.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    LogOutput.write(FormatString(format).render(args, errno: errno), log: log, type: type)
}
