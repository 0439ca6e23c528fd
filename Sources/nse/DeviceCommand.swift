import ArgumentParser
import NSEDevice
import NSEHost
import NSEJSON
import NSESystem

/// `nse device`: the emulated app install and its App Group container.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Create, inspect and change emulated devices (an app install with its App Group container).",
        subcommands: [Init.self, Show.self, Set.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a device: key pair, push tokens, entitlements, strings.")

        @Argument(help: ArgumentHelp("The container folder to create.", valueName: "dir"))
        var directory: String

        @Option(help: "The app's bundle id.")
        var bundleID = "org.example.app"

        @Option(help: "The Apple team id (10 characters).")
        var teamID = "ABCDE12345"

        @Flag(help: "Grant the com.apple.developer.usernotifications.filtering entitlement.")
        var filtering = false

        @Option(help: "The app's locale, e.g. en or fr-FR.")
        var locale = "en"

        func run() throws {
            var options = Device.Options()
            options.bundleID = bundleID
            options.teamID = teamID
            options.filtering = filtering
            options.locale = locale
            do {
                let device = try Device.create(at: directory, options: options)
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch {
                throw Failure(error.code == .invalidOption ? .usage : (error.code == .io ? .ioError : .config), error.description).exit()
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a device as JSON (never its private key).")

        @Argument(help: ArgumentHelp("The container folder (default: the default device).", valueName: "dir"))
        var directory: String?

        func run() throws {
            do {
                let device = try DeviceOption(device: directory).open()
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a device's entitlements or locale.")

        @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
        var directory: String

        @Option(help: "Grant (true) or revoke (false) the filtering entitlement.")
        var filtering: Bool?

        @Option(help: "The app's locale, e.g. en or fr-FR.")
        var locale: String?

        func run() throws {
            do {
                var device = try DeviceOption(device: directory).open()
                if let filtering { device.config.filtering = filtering }
                if let locale { device.config.locale = locale }
                do { try device.save() } catch { throw Failure(error) }
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }
}

extension DeviceOption {
    init(device: String?) {
        self.init()
        self.device = device
    }
}
