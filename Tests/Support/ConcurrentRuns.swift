import Foundation

extension TestSupport {
    /// Starts the built `nse` once per standard input, all at once (separate processes, not limited by the test's
    /// thread pool, as iOS starts an extension per push), and returns each one's standard output in input order
    /// once all have exited.
    public static func nseAtOnce(_ arguments: [String], stdins: [String]) throws -> [String] {
        var running: [(Process, Pipe)] = []
        for stdin in stdins {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nse)
            process.arguments = arguments
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
            running.append((process, output))
        }
        return running.map { process, output in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }
}
