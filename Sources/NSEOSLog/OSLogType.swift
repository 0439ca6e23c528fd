/// A message's level: Apple's `os_log_type_t`, imported in Swift as a struct over its `UInt8`, with Apple's raw values.
public struct OSLogType: Equatable, Hashable, RawRepresentable, Sendable {
    public var rawValue: UInt8

    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public init(rawValue: UInt8) { self.rawValue = rawValue }
}

extension OSLogType {
    /// `OS_LOG_TYPE_DEFAULT` (0x00): `Logger.log(_:)`, `notice(_:)` and `os_log` without a type.
    public static let `default` = OSLogType(0x00)
    /// `OS_LOG_TYPE_INFO` (0x01): `Logger.info(_:)`. Not printed unless `NSE_OSLOG_LEVEL` is `info` or `debug`.
    public static let info = OSLogType(0x01)
    /// `OS_LOG_TYPE_DEBUG` (0x02): `Logger.debug(_:)`, `trace(_:)`. Not printed unless `NSE_OSLOG_LEVEL` is `debug`.
    public static let debug = OSLogType(0x02)
    /// `OS_LOG_TYPE_ERROR` (0x10): `Logger.error(_:)`, `warning(_:)`.
    public static let error = OSLogType(0x10)
    /// `OS_LOG_TYPE_FAULT` (0x11): `Logger.fault(_:)`, `critical(_:)`.
    public static let fault = OSLogType(0x11)
}

extension OSLogType {
    /// The level's name in nse's output and in `NSE_OSLOG_LEVEL`, as Apple's `log` tool names the types. A raw value
    /// that is none of Apple's five is treated as `default`.
    var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .error: "error"
        case .fault: "fault"
        default: "default"
        }
    }

    /// The level's rank from least to most severe: debug, info, default, error, fault (raw values do not sort so).
    var severity: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .error: 3
        case .fault: 4
        default: 2
        }
    }

    /// The level `NSE_OSLOG_LEVEL` names, case-insensitively; `nil` for any other text.
    init?(levelName: String) {
        switch levelName.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "default": self = .default
        case "error": self = .error
        case "fault": self = .fault
        default: return nil
        }
    }
}

/// Apple's C constants, unavailable in Swift on Apple's platforms too: the compiler names the `OSLogType` to use.
// swift-format-ignore: AlwaysUseLowerCamelCase
@available(*, unavailable, renamed: "OSLogType.default")
public var OS_LOG_TYPE_DEFAULT: OSLogType { .default }
// swift-format-ignore: AlwaysUseLowerCamelCase
@available(*, unavailable, renamed: "OSLogType.info")
public var OS_LOG_TYPE_INFO: OSLogType { .info }
// swift-format-ignore: AlwaysUseLowerCamelCase
@available(*, unavailable, renamed: "OSLogType.debug")
public var OS_LOG_TYPE_DEBUG: OSLogType { .debug }
// swift-format-ignore: AlwaysUseLowerCamelCase
@available(*, unavailable, renamed: "OSLogType.error")
public var OS_LOG_TYPE_ERROR: OSLogType { .error }
// swift-format-ignore: AlwaysUseLowerCamelCase
@available(*, unavailable, renamed: "OSLogType.fault")
public var OS_LOG_TYPE_FAULT: OSLogType { .fault }
