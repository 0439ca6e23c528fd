public import Foundation
public import NSEJSON

#if canImport(Glibc)
    import Glibc
#endif

/// A long-running `nse` command (the built binary: `nse serve`, `nse files`…) as the tests start one: its first
/// stdout line read as JSON (where it listens), stopped with SIGTERM and a bounded wait, killed if a test forgot.
public final class CommandProcess: @unchecked Sendable {
    public let process = Process()
    /// The first line it printed, parsed (`null` if it was not JSON).
    public let firstLine: JSON

    /// Starts `nse ARGUMENTS` and waits (at most `timeout` seconds) for its first line.
    /// - Parameter stderr: where its log goes (default: nowhere).
    public init(_ arguments: [String], stderr: FileHandle = .nullDevice, timeout: Double = 30, what: String) throws {
        process.executableURL = URL(fileURLWithPath: TestSupport.nse)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = stderr
        try process.run()
        let line = try TestSupport.firstLine(of: process, output: output, timeout: timeout, what: what)
        firstLine = (try? JSON.parse(line)) ?? .null
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// `listening` of the first line: the base URL.
    public var url: String { firstLine["listening"]?.stringValue ?? "" }

    public var pid: Int32 { process.processIdentifier }

    /// SIGTERM, then a bounded wait (SIGKILL after `grace` seconds: status 9): the exit status and how long it took.
    @discardableResult public func stop(grace: Double = 20) -> (status: Int32, seconds: Double) {
        let start = Date()
        guard process.isRunning else { return (process.terminationStatus, 0) }
        kill(process.processIdentifier, SIGTERM)
        for _ in 0..<Int(grace * 20) where process.isRunning { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (process.terminationStatus, Date().timeIntervalSince(start))
    }
}
