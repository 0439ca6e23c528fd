public import NSEJSON
public import NSEPayload
import NSESystem

/// How the device's app handles VoIP payloads (the PushKit side of the app).
public struct VoIPSettings: Sendable, Equatable, JSONConvertible {
    /// What runs when iOS launches the app for a VoIP payload.
    public enum AppHandler: Sendable, Equatable, JSONConvertible {
        /// nse's own: reports the call correctly from the payload.
        case builtIn
        /// A program run with the VoIP payload as JSON on stdin; it prints the call report.
        case command(String)
        /// An HTTP URL that gets the VoIP payload POSTed and answers with the call report.
        case url(String)

        public var name: String {
            switch self {
            case .builtIn: "built-in"
            case .command: "command"
            case .url: "url"
            }
        }

        public static var jsonKind: String { "\"built-in\", or an object with a command or a url" }

        /// `"built-in"`, `{"command": …}` or `{"url": …}`.
        public var json: JSON {
            switch self {
            case .builtIn: "built-in"
            case .command(let command): ["command": .string(command)]
            case .url(let url): ["url": .string(url)]
            }
        }

        public init(json: JSON) throws(JSONFieldError) {
            if json == "built-in" {
                self = .builtIn
            } else if case .object(let handler) = json, let command: String = try handler.field("command") {
                self = .command(command)
            } else if case .object(let handler) = json, let url: String = try handler.field("url") {
                self = .url(url)
            } else {
                throw JSONFieldError(expected: Self.jsonKind, problem: .found(nil))
            }
        }
    }

    public var appHandler: AppHandler = .builtIn
    /// What the app reports its calls through: CallKit, or LiveCommunicationKit (iOS 17.4; docs/voip.md). The
    /// reference extension hands call offers to the same framework's `reportNewIncomingVoIPPushPayload`.
    public var framework = VoIPFramework.callKit
    /// Seconds the app has to report the call before it is terminated.
    public var appDeadline: Double = 5
    /// Failures to report after which iOS stops delivering VoIP payloads to the app.
    public var maxStrikes: Int = 3
    /// A call offer older than this (seconds) is not rung: it becomes a missed-call notification.
    public var maxOfferAge: Double = 30
    /// What the user and the app do with a call once it is reported (the whole call, docs/voip.md).
    public var call = CallSettings()

    public init() {}

    public static var jsonKind: String { "an object" }

    public var json: JSON {
        [
            "framework": framework.json, "app_handler": appHandler.json, "app_deadline_s": .double(appDeadline),
            "max_strikes": maxStrikes.json,
            "max_offer_age_s": .double(maxOfferAge), "call": call.json,
        ]
    }

    /// Reads the settings; each one left out keeps its default.
    public init(json: JSON) throws(JSONFieldError) {
        let settings = try JSONObject(json: json)
        framework = try settings.field("framework") ?? framework
        appHandler = try settings.field("app_handler") ?? appHandler
        appDeadline = try settings.field("app_deadline_s") ?? appDeadline
        maxStrikes = try settings.field("max_strikes") ?? maxStrikes
        maxOfferAge = try settings.field("max_offer_age_s") ?? maxOfferAge
        call = try settings.field("call") ?? call
    }

    /// Parses `--app-handler CMD|URL` (`builtin` for nse's own).
    public static func handler(from text: String) -> AppHandler {
        if text == "builtin" || text == "built-in" { return .builtIn }
        if text.hasPrefix("http://") || text.hasPrefix("https://") { return .url(text) }
        return .command(text)
    }
}
