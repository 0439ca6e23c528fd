public import Foundation
import NSECertificates

/// Helpers the test targets share: where the built binaries and the fixtures are, temporary folders,
/// and running a command like a user would.
public enum TestSupport {
    /// The package root (found from this file's location).
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/Support/TestSupport.swift
        return url.path
    }()

    /// `fixtures/` in the package.
    public static var fixtures: String { packageRoot + "/fixtures" }

    /// The folder with the built `nse` and `nse-extension`: `$NSE_BIN_DIR`, else the folder of the test bundle.
    public static let binDirectory: String = {
        if let explicit = ProcessInfo.processInfo.environment["NSE_BIN_DIR"], !explicit.isEmpty { return explicit }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        // Inside an .xctest bundle on Linux the runner is the bundle itself; its folder holds the products.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("nse").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.path
    }()

    /// The built `nse`.
    public static var nse: String { binDirectory + "/nse" }
    /// The built reference extension.
    public static var referenceExtension: String { binDirectory + "/nse-extension" }

    /// A new empty temporary folder, removed with everything in it when the test process exits (kept when
    /// `NSE_KEEP_TEST_DIRS` is set, to look at after a failure).
    public static func temporaryDirectory(_ prefix: String = "nse-test") throws -> String {
        let path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        TemporaryFolders.remember(path)
        return path
    }

    /// What a finished command printed and returned.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs a program to completion with optional stdin; killed after `timeout` seconds so a test never hangs.
    public static func run(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = ReadBox()
        let errorData = ReadBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            outputData.value = output.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            errorData.value = error.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            group.wait()
        }
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: outputData.value, as: UTF8.self),
            stderr: String(decoding: errorData.value, as: UTF8.self))
    }

    /// Runs the built `nse`.
    public static func nse(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws
        -> Output
    {
        try run(nse, arguments, stdin: stdin, environment: environment)
    }

    /// Writes a text file.
    public static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The first line `process` writes to `output` (a server's listening line), read off the calling thread so a
    /// silent process cannot hang the test: after `timeout` seconds the process is killed and `SetupError` thrown.
    public static func firstLine(of process: Process, output: Pipe, timeout: Double, what: String) throws -> String {
        final class Line: @unchecked Sendable { var text = "" }
        let line = Line()
        let done = DispatchSemaphore(value: 0)
        let handle = output.fileHandleForReading
        DispatchQueue.global().async {
            var bytes: [UInt8] = []
            while !bytes.contains(0x0A) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                bytes += chunk
            }
            line.text = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            throw SetupError(description: "\(what) printed nothing in \(Int(timeout)) s")
        }
        return line.text
    }

    /// Why a test's set-up failed.
    public struct SetupError: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Where ``selfSignedCertificate(in:name:)`` wrote a certificate, and its pin. A type of this module, so a test
    /// reads its fields without importing `NSECertificates` itself.
    public struct CertificateFiles: Sendable {
        /// The certificate, PEM: it is its own CA, so it is also the file a client trusts.
        public var certificate: String
        /// The private key, PKCS #8 PEM (mode 0600).
        public var key: String
        /// The public key, SubjectPublicKeyInfo PEM (what libcurl pins by file).
        public var publicKey: String
        /// The public key's pin as libcurl takes it: `sha256//` and the base64 SHA-256 of its DER form.
        public var publicKeyPin: String
    }

    /// The tests' one certificate helper: a new self-signed EC P-256 certificate for 127.0.0.1 and localhost, made in
    /// process (``SelfSignedCertificate``), written as `DIR/NAME-cert.pem`, `DIR/NAME-key.pem` and `DIR/NAME-pub.pem`.
    public static func selfSignedCertificate(in directory: String, name: String = "server") throws -> CertificateFiles {
        let certificate = try SelfSignedCertificate()
        let files = try certificate.write(in: directory, name: name)
        return CertificateFiles(
            certificate: files.certificate, key: files.key, publicKey: files.publicKey,
            publicKeyPin: certificate.publicKeyPin)
    }
}

private final class ReadBox: @unchecked Sendable {
    var value = Data()
}
