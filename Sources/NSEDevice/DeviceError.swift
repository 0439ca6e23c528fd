/// A device container that cannot be created, read or used.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case notFound, alreadyExists, corrupt, insecureKey, invalidOption, io
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
