#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import NSEPayload
import NSECrypto
import NSEDevice
import NSEJSON
import NSESystem

/// `nse run` as one call: its options, the host's verdict printed on stdout, and the exit status.
///
/// Both front ends use it: the small `nse` executable parses the common options itself and runs it directly (no
/// argument-parsing library, no servers linked: it starts in a few milliseconds), and `nse-tool`'s full command
/// line builds it after its own parsing, validation and help.
public struct RunInvocation: Sendable, Equatable {
    public enum Format: String, Sendable { case json, text }

    public var device: String?
    public var payload: String?
    public var pushType: PushType = .alert
    public var budget: Double = 30
    public var grace: Double = 1
    public var memoryLimitMegabytes: Double = 24
    public var extensionCommand: String?
    public var format: Format = .json

    public init() {}

    /// Parses the arguments after `run`; `nil` unless every one is plainly valid (no `--help`, no unknown option,
    /// every value in range), so that anything else goes to the full command line, which explains the problem.
    public static func parse(_ arguments: [String]) -> RunInvocation? {
        var invocation = RunInvocation()
        var index = 0
        func value(_ option: String) -> String? {
            let argument = arguments[index]
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
            guard argument == option, index + 1 < arguments.count else { return nil }
            index += 1
            return arguments[index]
        }
        func number(_ text: String?, in range: ClosedRange<Double>, excludingLower: Bool) -> Double? {
            guard let text, let number = Double(text), number.isFinite, range.contains(number) else { return nil }
            return excludingLower && number == range.lowerBound ? nil : number
        }
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            switch name {
            case "--device": guard let path = value(name), !path.isEmpty else { return nil }; invocation.device = path
            case "--push-type": guard let type = value(name).flatMap(PushType.init(rawValue:)) else { return nil }; invocation.pushType = type
            case "--budget": guard let seconds = number(value(name), in: 0...3600, excludingLower: true) else { return nil }; invocation.budget = seconds
            case "--grace": guard let seconds = number(value(name), in: 0...60, excludingLower: false) else { return nil }; invocation.grace = seconds
            case "--memory-limit":
                guard let megabytes = number(value(name), in: 0...4096, excludingLower: true) else { return nil }
                invocation.memoryLimitMegabytes = megabytes
            case "--extension":
                guard let command = value(name), !command.allSatisfy({ $0 == " " }) else { return nil }
                invocation.extensionCommand = command
            case "--format": guard let format = value(name).flatMap(Format.init(rawValue:)) else { return nil }; invocation.format = format
            default:
                // One positional payload (a path, or - for stdin); any other option is the full parser's to judge.
                guard argument == "-" || !argument.hasPrefix("-"), invocation.payload == nil else { return nil }
                invocation.payload = argument
            }
            index += 1
        }
        return invocation
    }

    /// Delivers the payload and prints the result (JSON, or text); errors are one line on stderr.
    ///
    /// A device that cannot be used (no device, an unreadable or corrupt `device.json`, a private key or SIP
    /// password that is missing, unreadable, corrupt or readable by others) is a configuration error, 78, found
    /// before anything is delivered: nothing is run and no result printed, so a CI run cannot pass on a broken
    /// setup. A payload that is refused (over 1 MiB included) prints its `rejected` result and exits 65.
    public func execute() -> ExitStatus {
        func fail(_ status: ExitStatus, _ message: String) -> ExitStatus {
            StandardStreams.writeError("nse: \(NotificationResult.terminalSafe(message))\n")
            return status
        }
        let device: Device
        do throws(DeviceError) {
            if let path = self.device { device = try Device.open(at: path) } else { device = try Device.openOrCreate(at: Device.defaultDirectory()) }
            try device.checkKeys()
        } catch {
            return fail(error.code == .io ? .ioError : .config, error.description)
        }
        let source: PayloadSource = (payload == nil || payload == "-") ? .stdin : .file(payload!)
        let start = Clock.monotonicNanoseconds()
        let bytes: [UInt8]?
        do { bytes = try CommandInput.read(payload, limit: RunInvocation.readLimit) } catch { return fail(error.status, error.message) }
        let result: NotificationResult
        if let bytes {
            let host = NotificationHost(
                device: device,
                limits: ExtensionLimits(budget: budget, grace: grace, memoryLimitKilobytes: Int(memoryLimitMegabytes * 1024)),
                extensionCommand: extensionCommand.map(NotificationHost.shellCommand) ?? NotificationHost.referenceExtensionCommand())
            result = host.deliver(bytes, pushType: pushType, source: source)
        } else {
            // Not read in full: refused as APNs refuses any payload over its limit, with the same result document.
            let rejection = PayloadRejection(
                .payloadTooLarge,
                "the payload from \(source.name) is larger than 1 MiB (APNs accepts at most \(pushType.payloadLimit) bytes for a \(pushType.rawValue) push)")
            result = NotificationResult.rejected(
                rejection, requestID: (try? SecureRandom.uuid()) ?? "00000000-0000-4000-8000-000000000000",
                pushType: pushType, intakeMilliseconds: Clock.millisecondsSince(start))
        }
        StandardStreams.writeOut(format == .text ? result.text : result.json.serialized(.pretty) + "\n")
        return result.isRejected ? fail(.rejected, "payload rejected: \(result.reason)") : .ok
    }

    /// The most `nse run` reads of a payload: far above APNs's limits, so that an oversize payload is measured and
    /// refused by intake; anything longer is refused unread.
    public static let readLimit = 1024 * 1024
}

/// What a command is given to read: standard input for `nil` or `-`, else the file, with a size cap.
public enum CommandInput {
    /// Why the input could not be read: the exit status it calls for (66 missing, 74 unreadable) and a one-line
    /// message naming the file.
    public struct Failure: Error, Sendable {
        public var status: ExitStatus
        public var message: String
    }

    /// The bytes, or `nil` when there are more than `limit`.
    public static func read(_ path: String?, limit: Int) throws(Failure) -> [UInt8]? {
        do {
            guard let path, path != "-" else { return try FileSystem.readAll(fd: 0, limit: limit) }
            guard FileSystem.exists(path) else { throw Failure(status: .noInput, message: "\(path): no such file") }
            return try FileSystem.readFile(path, limit: limit)
        } catch let error as Failure {
            throw error
        } catch let error as SystemError {
            throw Failure(status: error.errnoCode == ENOENT ? .noInput : .ioError, message: error.description)
        } catch {
            throw Failure(status: .ioError, message: "\(error)")
        }
    }
}
