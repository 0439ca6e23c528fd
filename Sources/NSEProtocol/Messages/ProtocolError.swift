import NSEJSON

/// A protocol line that makes no sense.
public struct ProtocolError: Error, Sendable, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// A message from `sender` whose members are not what the protocol says: one line naming the member and what it
    /// must be, never its value.
    init(_ sender: String, _ error: JSONFieldError) {
        self.init("\(sender) sent an invalid message: \(error)")
    }

    /// A protocol field as an error may name it: at most 32 characters, anything but printable ASCII shown as `?`
    /// (the error becomes a result's `reason`: it must stay one line and never carry a terminal escape).
    static func printable(_ field: String) -> String {
        String(
            String.UnicodeScalarView(
                field.unicodeScalars.prefix(32).map { $0.value >= 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }
}
