public import Foundation

/// A log handle: a subsystem and a category, as Apple's `OSLog` (`os_log_t`, an NSObject). `Logger` and `os_log` write
/// through one.
///
/// nse writes a handle's messages to standard error, headed `<subsystem>/<category>` (NSEOSLog.swift). `public final`, not
/// `open` as the imported Objective-C class is: a handle is an immutable value shared across threads (`Sendable`), and
/// nothing subclasses it.
public final class OSLog: NSObject, @unchecked Sendable {
    let subsystem: String
    let category: String
    /// `false` for `OSLog.disabled` alone.
    let isWritten: Bool

    init(subsystem: String, category: String, isWritten: Bool) {
        self.subsystem = subsystem
        self.category = category
        self.isWritten = isWritten
        super.init()
    }

    /// A handle for messages of `subsystem` (by convention the extension's bundle identifier) about `category`.
    public convenience init(subsystem: String, category: String) {
        self.init(subsystem: subsystem, category: category, isWritten: true)
    }

    /// Apple's `OS_LOG_DEFAULT`: no subsystem, no category (printed `-/-`).
    public static let `default` = OSLog(subsystem: "", category: "", isWritten: true)

    /// Apple's `OS_LOG_DISABLED`: a handle whose messages are never written (nor their arguments evaluated).
    public static let disabled = OSLog(subsystem: "", category: "", isWritten: false)

    /// Whether a message of `type` would be written: Apple's `os_log_type_enabled`. In nse, `false` for
    /// `OSLog.disabled` and for levels below `NSE_OSLOG_LEVEL` (NSEOSLog.swift).
    public func isEnabled(type: OSLogType) -> Bool { LogOutput.isEnabled(self, type) }
}
