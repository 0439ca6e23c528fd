import ArgumentParser
import Logging
import NSECommandLine
import NSEDevice
import NSEJSON
import NSEMainApp
import NSESystem

/// `nse app DIR`: the device's main app in the foreground until SIGTERM or `--for` (docs/app.md).
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Run the device's main app in the foreground: it takes the shared core and receives messages itself.",
        discussion: """
            Prints one JSON line per event (foreground, registered, message, imdn, background). SIGTERM, or the end \
            of --for, sends it to the background: it stops its core and re-REGISTERs with its push parameters, then \
            exits 0. Exit 75 when the device's main app already runs, 74 when the registrar refuses or does not \
            answer, 78 when the device has no usable SIP account.
            """)

    @Argument(help: ArgumentHelp("The device's container folder.", valueName: "dir"))
    var directory: String

    @Option(
        name: .customLong("for"), parsing: .unconditional,
        help: ArgumentHelp("Seconds in the foreground, then to the background on its own.", valueName: "seconds"))
    var stayFor: Double?

    func validate() throws {
        if let stayFor, !(stayFor > 0 && stayFor <= 86400) {
            throw ValidationError("--for must be more than 0 and at most 86400 seconds")
        }
    }

    func run() async throws {
        let device: Device
        do { device = try DeviceOption(device: directory).open() } catch { throw error.exit() }
        let app = MainApp(device: device, stayFor: stayFor, logger: Logger(label: "nse.app"))
        let ending = await app.run { line in StandardStreams.writeOut(line.serialized() + "\n") }
        switch ending {
        case .background:
            return
        case .coreHeld(let pid):
            throw Failure(.tempFail, "the main app of \(device.directory) already runs (process \(pid))").exit()
        case .unusable(let problem):
            throw Failure(.config, problem).exit()
        case .registerFailed(let reason):
            throw Failure(.ioError, "register failed: \(reason)").exit()
        }
    }
}
