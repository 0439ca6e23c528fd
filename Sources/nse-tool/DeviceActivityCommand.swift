import ArgumentParser
import NSECommandLine
import NSEDevice
import NSEJSON
import NSESystem

extension DeviceCommand {
    /// `nse device activity`: the app's Live Activities, as ActivityKit gives them to it (docs/device.md).
    struct Activity: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start, list and end the app's Live Activities; give its push-to-start tokens.",
            subcommands: [Start.self, PushToStartToken.self, List.self, End.self, Set.self])

        struct Start: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "Start a Live Activity from the app (in the foreground): prints it with its push token, or subscribed to --channel instead (iOS 18)."
            )

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @Option(help: ArgumentHelp("The ActivityAttributes type's name.", valueName: "type"))
            var attributesType: String

            @Option(help: ArgumentHelp("Its static attributes, a JSON object (default {}).", valueName: "json"))
            var attributes = "{}"

            @Option(help: ArgumentHelp("What it shows first, a JSON object (default {}).", valueName: "json"))
            var contentState = "{}"

            @Option(
                help: ArgumentHelp(
                    "A broadcast channel id to listen to (pushType .channel, iOS 18) instead of a push token.",
                    valueName: "id"))
            var channel: String?

            func validate() throws {
                try Activity.checkType(attributesType)
                _ = try Activity.object(attributes, option: "--attributes")
                _ = try Activity.object(contentState, option: "--content-state")
                if let channel, channel.isEmpty || channel.count > 256 || channel.contains(where: \.isWhitespace) {
                    throw ValidationError("--channel must be a channel id as the provider created it (base64)")
                }
            }

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    try Activity.require(LiveActivityRelease.activities, "Live Activities", on: device)
                    if channel != nil {
                        try Activity.require(LiveActivityRelease.channels, "Broadcast channels", on: device)
                    }
                    let now = SystemClock.unixMilliseconds()
                    let attributes = try Activity.parsed(attributes, option: "--attributes")
                    let state = try Activity.parsed(contentState, option: "--content-state")
                    let activity: LiveActivity
                    do {
                        activity = try device.liveActivities.update { store throws(DeviceError) in
                            try store.start(
                                attributesType: attributesType, attributes: attributes, contentState: state,
                                channel: channel, now: now)
                        }
                    } catch { throw Failure(error) }
                    StandardStreams.writeOut(activity.json(at: now).serialized(.pretty) + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }

        struct PushToStartToken: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "push-to-start-token",
                abstract:
                    "Print the app's push-to-start token for an attributes type (iOS 17.2), made on first ask as pushToStartTokenUpdates gives it."
            )

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @Option(help: ArgumentHelp("The ActivityAttributes type's name.", valueName: "type"))
            var attributesType: String

            func validate() throws { try Activity.checkType(attributesType) }

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    try Activity.require(LiveActivityRelease.pushToStart, "Push-to-start tokens", on: device)
                    let token: String
                    do {
                        token = try device.liveActivities.update { state throws(DeviceError) in
                            try state.pushToStartToken(for: attributesType)
                        }
                    } catch { throw Failure(error) }
                    let line: JSON = [
                        "attributes_type": .string(attributesType), "push_to_start_token": .string(token),
                    ]
                    StandardStreams.writeOut(line.serialized(.pretty) + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the app's Live Activities (with their phase now) and push-to-start tokens.")

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    let state: LiveActivityState
                    do { state = try device.liveActivities.read() } catch { throw Failure(error) }
                    let now = SystemClock.unixMilliseconds()
                    var document = state.json.objectValue ?? JSONObject()
                    document["format"] = nil
                    document["activities"] = .array(state.activities.map { $0.json(at: now) })
                    StandardStreams.writeOut(JSON.object(document).serialized(.pretty) + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }

        struct End: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "End a Live Activity from the app (Activity.end): it stays on the lock screen until dismissed.")

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @Option(help: ArgumentHelp("The activity's id.", valueName: "id"))
            var id: String

            @Option(
                help: ArgumentHelp(
                    "When it leaves the lock screen, Unix seconds (default: up to four hours after the end; a past date: at once).",
                    valueName: "seconds"))
            var dismissalDate: Int64?

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    let now = SystemClock.unixMilliseconds()
                    let ended: LiveActivity?
                    do {
                        ended = try device.liveActivities.update { state throws(DeviceError) in
                            state.end(id: id, dismissal: dismissalDate, now: now)
                        }
                    } catch { throw Failure(error) }
                    guard let ended else {
                        throw Failure(.usage, "no running Live Activity with id \(id) in \(directory)")
                    }
                    StandardStreams.writeOut(ended.json(at: now).serialized(.pretty) + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Change what the app declares for its Live Activities.")

            @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
            var directory: String

            @Option(
                help: ArgumentHelp(
                    "NSSupportsLiveActivitiesFrequentUpdates in the app's Info.plist: its priority-10 updates are not throttled by nse serve's budget.",
                    valueName: "true|false"))
            var frequentUpdates: Bool?

            func run() throws {
                do throws(Failure) {
                    let device = try DeviceOption(device: directory).open()
                    let state: LiveActivityState
                    do {
                        state = try device.liveActivities.update { state throws(DeviceError) in
                            if let frequentUpdates { state.frequentUpdates = frequentUpdates }
                            return state
                        }
                    } catch { throw Failure(error) }
                    let line: JSON = ["frequent_updates": .bool(state.frequentUpdates)]
                    StandardStreams.writeOut(line.serialized(.pretty) + "\n")
                } catch {
                    throw error.exit()
                }
            }
        }

        /// An attributes type is a Swift type's name: letters, digits, `_` and `.` (a nested type).
        static func checkType(_ type: String) throws {
            guard !type.isEmpty, type.count <= 256,
                type.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ".") })
            else {
                throw ValidationError("--attributes-type must be a Swift type's name, e.g. DeliveryAttributes")
            }
        }

        /// A JSON object given on the command line; a one-line usage error naming the option otherwise.
        static func object(_ text: String, option: String) throws -> JSONObject {
            guard let object = (try? JSON.parse(text))?.objectValue else {
                throw ValidationError("\(option) must be a JSON object, e.g. {\"eta\":\"5 min\"}")
            }
            return object
        }

        static func parsed(_ text: String, option: String) throws(Failure) -> JSONObject {
            guard let object = (try? JSON.parse(text))?.objectValue else {
                throw Failure(.usage, "\(option) must be a JSON object")
            }
            return object
        }

        /// Refuses, with exit status 78, what the device's iOS release does not have yet.
        static func require(_ release: IOSVersion, _ what: String, on device: Device) throws(Failure) {
            guard device.config.iosVersion >= release else {
                throw Failure(
                    .config,
                    "\(what) need iOS \(release) or later; the device runs iOS \(device.config.iosVersion) (nse device set --ios-version)"
                )
            }
        }
    }
}
