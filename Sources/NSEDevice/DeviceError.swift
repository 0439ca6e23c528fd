/// A device container that cannot be created, read or used.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No device there, or one of its required files (the private key) is missing.
        case notFound
        case alreadyExists
        /// A device file that is not what it should be (bad JSON, not a key).
        case corrupt
        /// A private key or password file that group or others can access.
        case insecureKey
        case invalidOption
        /// A device file that exists but cannot be read (permissions, a folder in its place, a failing disk).
        case unreadable
        /// Writing the container failed (creating a device, saving its settings).
        case io
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
