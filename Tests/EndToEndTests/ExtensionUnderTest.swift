import Foundation
import NSEJSON
import NSETestSupport

/// The built reference extension driven as its host drives it, one request at a time: the tests that need to stop
/// between its content and the host's acceptance (a host that dies there; the process looked at while it waits).
final class ExtensionUnderTest {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var received = Data()

    init() throws {
        process.executableURL = URL(fileURLWithPath: TestSupport.referenceExtension)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Sends an alert push's request for the device at `container` with a 10 s budget.
    func request(container: String, payload: String) {
        let deadline = Int64(Date().timeIntervalSince1970 * 1000) + 10_000
        let line =
            #"{"type":"request","protocol":1,"request_id":"r-1","push_type":"alert","container":"\#(container)","#
            + #""budget_ms":10000,"deadline_unix_ms":\#(deadline),"payload":\#(payload)}"# + "\n"
        input.fileHandleForWriting.write(Data(line.utf8))
    }

    /// Sends one line of the protocol as the host would (without its newline).
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// The first `count` lines it has written (its hello first), waiting up to 15 s for them.
    func lines(_ count: Int) throws -> [JSON] {
        let readUntil = Date().addingTimeInterval(15)
        while received.split(separator: 0x0A).count < count || received.last != 0x0A, Date() < readUntil {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        return try received.split(separator: 0x0A).prefix(count).map { try JSON.parse([UInt8]($0)) }
    }

    /// Closes its stdin (the host is gone) and waits for it to exit.
    func end() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
