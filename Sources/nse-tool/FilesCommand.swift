import ArgumentParser
import Logging
import NSECommandLine
import NSEFileServer
import NSEJSON
import NSESystem

/// `nse files`: the file-transfer server of a secure messenger's attachments, as Flexisip's beside its proxy.
struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files",
        abstract:
            "Serve encrypted attachments as a messenger's file-transfer server does: uploads, ranged downloads, faults.",
        discussion: """
            Prints one JSON line with the listening URL and the storage folder (port 0 picks a free port), then \
            serves until SIGINT or SIGTERM. POST /files stores a file (raw bytes, or a multipart/form-data part named \
            File) and answers 201 with its URL, size and SHA-256 once it is on disk; GET and HEAD /files/{id} serve \
            it with byte ranges. Faults and the request log are under /control (docs/files.md).
            """)

    @Option(
        help: ArgumentHelp(
            "The listener: HTTP/1.1; with --tls-cert, HTTPS with h2 and http/1.1 (ALPN).", valueName: "host:port"))
    var listen: String = "127.0.0.1:8080"

    @Option(
        help: ArgumentHelp(
            "The folder files are kept in (default: $XDG_DATA_HOME/nse/files; created on first use).",
            valueName: "dir"))
    var storage: String?

    @Option(help: ArgumentHelp("Certificate chain (PEM): serve HTTPS.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("Private key (PEM) for --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(help: ArgumentHelp("The largest file accepted; a larger upload gets 413.", valueName: "bytes"))
    var maxSize: Int = FileServerConfiguration.defaultMaxSize

    @Option(
        help: ArgumentHelp(
            "A fault on downloads, repeatable: slow:BYTES_PER_SECOND, truncate:BYTES, delay:SECONDS, not-found, wrong-hash, each optionally followed by ,file=ID and ,count=N (docs/files.md).",
            valueName: "spec"))
    var fault: [String] = []

    @Option(
        help: ArgumentHelp("Requests kept for GET /control/requests (the oldest go first; 0: none).", valueName: "n"))
    var requestLog: Int = FileServerConfiguration.defaultRequestLogCapacity

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        _ = try ServeCommand.parseAddress(listen, option: "--listen")
        guard maxSize >= 0 else { throw ValidationError("--max-size must be a number of bytes, 0 or more") }
        guard requestLog >= 0, requestLog <= 10_000_000 else {
            throw ValidationError("--request-log must be between 0 and 10000000")
        }
        for spec in fault {
            do { _ = try FileFault(spec: spec) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let address = try ServeCommand.parseAddress(listen, option: "--listen")
        let faults = try fault.map { spec in
            do { return try FileFault(spec: spec) } catch { throw ValidationError("\(error)") }
        }
        let logger = Logger(label: "nse.files")
        let configuration = FileServerConfiguration(
            host: address.host, port: address.port, storage: storage ?? FileServerConfiguration.defaultStorage(),
            tlsCertificatePath: tlsCert, tlsKeyPath: tlsKey, maxSize: maxSize, requestLogCapacity: requestLog)
        let folder = FileSystem.absolute(configuration.storage)
        let server: FileServer
        do {
            server = try FileServer(configuration, faults: faults, logger: logger) { url in
                let line: JSON = ["listening": .string(url), "storage": .string(folder)]
                StandardStreams.writeOut(line.serialized() + "\n")
            }
        } catch {
            throw Failure(error.code == .storage ? .ioError : .config, "files: \(error.description)").exit()
        }
        do { try await server.runUntilSignalled() } catch {
            throw Failure(.ioError, "files: \(error)").exit()
        }
    }
}
