/// A database operation that failed: what kind of failure, SQLite's own (extended) result code, and a message
/// that names the file and what was being done. Messages never carry stored values: bound parameters are not quoted.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The file could not be opened or created (missing folder, permissions).
        case cannotOpen
        /// The file is not a database, or its pages are damaged.
        case corrupt
        /// The disk (or a quota) is full: nothing of the failed transaction was kept.
        case full
        /// The file or its folder is read-only.
        case readOnly
        /// Another process held the lock for longer than the busy timeout.
        case busy
        /// A constraint (unique key, not null) refused the write.
        case constraint
        /// The file was written by a newer nse (its schema version is unknown here).
        case newerSchema
        /// Anything else SQLite reports (I/O errors, misuse).
        case other
    }

    public var code: Code
    /// SQLite's extended result code (0 when the error is nse's own).
    public var resultCode: Int32
    public var message: String

    public init(code: Code, resultCode: Int32 = 0, message: String) {
        self.code = code
        self.resultCode = resultCode
        self.message = message
    }

    public var description: String { message }
}
