import NSEJSON
import NSESystem

/// How the device's app handles VoIP payloads (the PushKit side of the app).
public struct VoIPSettings: Sendable, Equatable {
    /// What runs when iOS launches the app for a VoIP payload.
    public enum AppHandler: Sendable, Equatable {
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
    }

    public var appHandler: AppHandler = .builtIn
    /// Seconds the app has to report the call before it is terminated.
    public var appDeadline: Double = 5
    /// Failures to report after which iOS stops delivering VoIP payloads to the app.
    public var maxStrikes: Int = 3
    /// A call offer older than this (seconds) is not rung: it becomes a missed-call notification.
    public var maxOfferAge: Double = 30

    public init() {}

    var json: JSON {
        var handler: JSON = "built-in"
        switch appHandler {
        case .builtIn: break
        case .command(let command): handler = ["command": .string(command)]
        case .url(let url): handler = ["url": .string(url)]
        }
        return [
            "app_handler": handler, "app_deadline_s": .double(appDeadline), "max_strikes": .int(Int64(maxStrikes)),
            "max_offer_age_s": .double(maxOfferAge),
        ]
    }

    init(json: JSON?) {
        guard let json else { return }
        if let command = json["app_handler"]?["command"]?.stringValue {
            appHandler = .command(command)
        } else if let url = json["app_handler"]?["url"]?.stringValue {
            appHandler = .url(url)
        }
        appDeadline = json["app_deadline_s"]?.doubleValue ?? appDeadline
        maxStrikes = json["max_strikes"]?.intValue.map { Int($0) } ?? maxStrikes
        maxOfferAge = json["max_offer_age_s"]?.doubleValue ?? maxOfferAge
    }

    /// Parses `--app-handler CMD|URL` (`builtin` for nse's own).
    public static func handler(from text: String) -> AppHandler {
        if text == "builtin" || text == "built-in" { return .builtIn }
        if text.hasPrefix("http://") || text.hasPrefix("https://") { return .url(text) }
        return .command(text)
    }
}
