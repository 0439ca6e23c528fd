import NSECommandLine
import NSEDevice
import NSEHost
import NSEPayload

/// `nse run`'s arguments as the front door reads them by hand.
enum RunArguments {
    /// Parses the arguments after `run`; `nil` unless every one is plainly valid (no `--help`, no unknown option,
    /// every value in range), so that anything else goes to the full command line, which explains the problem.
    static func parse(_ arguments: [String]) -> RunOptions? {
        var options = RunOptions()
        var index = 0
        func value(_ option: String) -> String? {
            let argument = arguments[index]
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
            guard argument == option, index + 1 < arguments.count else { return nil }
            index += 1
            return arguments[index]
        }
        func number(_ limit: RunLimit) -> Double? {
            guard let text = value(limit.option), let number = Double(text), limit.accepts(number) else { return nil }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            switch name {
            case "--device":
                guard let path = value(name), !path.isEmpty else { return nil }
                options.device = path
            case "--push-type":
                guard let type = value(name).flatMap(PushType.init(rawValue:)) else { return nil }
                options.pushType = type
            case RunLimits.budget.option:
                guard let seconds = number(RunLimits.budget) else { return nil }
                options.budget = seconds
            case RunLimits.grace.option:
                guard let seconds = number(RunLimits.grace) else { return nil }
                options.grace = seconds
            case RunLimits.memoryLimit.option:
                guard let megabytes = number(RunLimits.memoryLimit) else { return nil }
                options.memoryLimitMegabytes = megabytes
            case "--extension":
                guard let command = value(name), !command.allSatisfy({ $0 == " " }) else { return nil }
                options.extensionCommand = command
            case "--call-action":
                guard let action = value(name).flatMap(CallSettings.Action.init(rawValue:)) else { return nil }
                options.callAction = action
            case "--must-report":
                switch value(name) {
                case "true": options.mustReport = true
                case "false": options.mustReport = false
                default: return nil
                }
            case "--extension-process":
                guard let mode = value(name).flatMap(ExtensionProcessPool.Mode.init(rawValue:)) else { return nil }
                options.extensionProcess = mode
            case "--extension-launch":
                guard let launch = value(name).flatMap(ExtensionForkServers.Launch.init(rawValue:)) else { return nil }
                options.extensionLaunch = launch
            case RunLimits.warmIdle.option:
                guard let seconds = number(RunLimits.warmIdle) else { return nil }
                options.warmIdle = seconds
            case "--format":
                guard let format = value(name).flatMap(RunOptions.Format.init(rawValue:)) else { return nil }
                options.format = format
            default:
                // Payloads (paths, or - for stdin at most once); any other option is the full parser's to judge.
                guard argument == "-" || !argument.hasPrefix("-") else { return nil }
                guard argument != "-" || !options.payloads.contains("-") else { return nil }
                options.payloads.append(argument)
            }
            index += 1
        }
        return options
    }
}
