import ArgumentParser
import NSECommandLine
import NSEDevice
import NSEHost
import NSESystem

/// Ends the command with a one-line error on stderr and a documented exit status.
struct Failure: Error {
    var status: ExitStatus
    var message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    init(_ error: DeviceError) {
        self.init(error.code == .io ? .ioError : .config, error.description)
    }

    /// Prints the message and returns the exit code to throw.
    func exit() -> ExitCode {
        StandardStreams.writeError("nse: \(message)\n")
        return ExitCode(status.rawValue)
    }
}

/// The `--device DIR` option every command shares.
struct DeviceOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The device container folder (default: $NSE_DEVICE, else $XDG_DATA_HOME/nse/device; created on first use).",
            valueName: "dir"))
    var device: String?

    /// Opens the named device, or the default one (creating it on first use).
    func open() throws(Failure) -> Device {
        do {
            if let device { return try Device.open(at: device) }
            return try Device.openOrCreate(at: Device.defaultDirectory())
        } catch {
            throw Failure(error)
        }
    }
}

/// Reads a whole input (`-` or nil = stdin) with a size cap; `nil` when over the cap.
func readInput(_ path: String?, limit: Int) throws(Failure) -> [UInt8]? {
    do { return try CommandInput.read(path, limit: limit) } catch { throw Failure(error.status, error.message) }
}
