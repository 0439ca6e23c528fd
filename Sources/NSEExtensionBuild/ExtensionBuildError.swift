/// Why an extension could not be built: one line naming the problem (the compiler's own diagnostics are printed as
/// it printed them, before it).
public struct ExtensionBuildError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The sources cannot make an extension: a wrong extension point, no principal class, compiler errors.
        case sources
        /// A path given does not exist.
        case missing
        /// The SDK or the compiler is not there.
        case unavailable
        /// Reading or writing failed.
        case io
        /// A setting has a value it cannot have (`NSE_CACHE_EXTENSIONS`).
        case usage
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
