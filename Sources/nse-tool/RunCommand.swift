import ArgumentParser
import NSECommandLine
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSESystem

/// `nse run`: one push, one extension process, the host's verdict on stdout.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Deliver one push payload to the device and print what iOS would show, and why.",
        discussion:
            "The payload is APNs JSON from stdin, a file, or a simctl .apns file. Exit status 0 for any outcome a device could show, 65 when the payload is rejected (the result is still printed), 78 when the device cannot be used (nothing is run)."
    )

    @OptionGroup var deviceOption: DeviceOption

    @Argument(
        help: ArgumentHelp(
            "The payload: a JSON file, a simctl .apns file, or - for stdin. Several: pushes to the same device in order, one compact JSON result per line.",
            valueName: "payload"))
    var payloads: [String] = []

    @Option(help: "The apns-push-type: alert, background or voip.")
    var pushType: String = "alert"

    // Numbers take the next argument whatever it looks like, so `--budget -1` is judged by validate() ("must be
    // between …") rather than read as a missing value followed by an unknown option.
    @Option(parsing: .unconditional, help: "Seconds before serviceExtensionTimeWillExpire (decimals allowed).")
    var budget: Double = RunLimits.budget.defaultValue

    @Option(parsing: .unconditional, help: "Seconds the extension has after the expiry notice before it is killed.")
    var grace: Double = RunLimits.grace.defaultValue

    @Option(
        parsing: .unconditional,
        help:
            "Peak memory allowed to the extension, in MB (default: the device's, 24 on iOS 15 and later; docs/media.md)."
    )
    var memoryLimit: Double?

    @Option(
        name: .customLong("extension"),
        help: ArgumentHelp(
            "Run this command as the extension instead of the reference one (see docs/protocol.md).", valueName: "cmd"))
    var extensionCommand: String?

    @Option(help: "Output format: json or text.")
    var format: String = "json"

    @Option(
        help: ArgumentHelp(
            "For this run, what the user does with a call the push brings, instead of the device's setting: "
                + CallSettings.Action.jsonKind + ".", valueName: "action"))
    var callAction: String?

    @Option(
        help: ArgumentHelp(
            "What iOS 26.4 tells the app with a voip push (PKVoIPPushMetadata.mustReport): false lets it decline to report without a strike.",
            valueName: "bool"))
    var mustReport: String = "true"

    @OptionGroup var processes: ExtensionProcessOptions

    func validate() throws {
        guard PushType(rawValue: pushType) != nil else {
            throw ValidationError("--push-type must be alert, background or voip")
        }
        for (value, limit) in [
            (budget, RunLimits.budget), (grace, RunLimits.grace), (memoryLimit ?? 24, RunLimits.memoryLimit),
        ] {
            guard limit.accepts(value) else { throw ValidationError(limit.requirement) }
        }
        guard ["json", "text"].contains(format) else { throw ValidationError("--format must be json or text") }
        guard ["true", "false"].contains(mustReport) else {
            throw ValidationError("--must-report must be true or false")
        }
        if payloads.filter({ $0 == "-" }).count > 1 { throw ValidationError("stdin (-) can be given once") }
        if let callAction, CallSettings.Action(rawValue: callAction) == nil {
            throw ValidationError("--call-action must be \(CallSettings.Action.jsonKind)")
        }
        if let extensionCommand, extensionCommand.allSatisfy({ $0 == " " }) {
            throw ValidationError("--extension needs a command")
        }
    }

    func run() throws {
        var options = RunOptions()
        options.device = deviceOption.device
        options.payloads = payloads
        options.pushType = PushType(rawValue: pushType)!
        options.budget = budget
        options.grace = grace
        options.memoryLimitMegabytes = memoryLimit
        options.extensionCommand = extensionCommand
        options.format = RunOptions.Format(rawValue: format)!
        options.callAction = callAction.flatMap(CallSettings.Action.init(rawValue:))
        options.mustReport = mustReport == "true"
        options.extensionProcess = processes.mode
        options.extensionLaunch = processes.launch
        options.warmIdle = processes.warmIdle
        let status = options.execute()
        if status != .ok { throw ExitCode(status.rawValue) }
    }
}
