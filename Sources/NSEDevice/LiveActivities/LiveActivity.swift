public import NSEJSON

/// One Live Activity on the device, as ActivityKit keeps it: what it is (its attributes type and attributes), how
/// pushes reach it (its push token, or the broadcast channel it subscribed to), and what it shows now.
public struct LiveActivity: Sendable, Equatable {
    /// Where the activity is in its life, as the lock screen shows it at a given moment.
    public enum Phase: String, Sendable, Equatable {
        /// Shown and updatable.
        case active
        /// Shown, updatable, past its `stale-date`: the app's view draws it as out of date.
        case stale
        /// Ended (by a push, the app, or the eight-hour limit): still on the lock screen until it is dismissed.
        case ended
        /// Gone from the lock screen: its dismissal date, or four hours after it ended, has passed.
        case dismissed
    }

    /// Who started it.
    public enum Origin: String, Sendable, Equatable, CaseIterable, JSONConvertible {
        /// The app, in the foreground (`Activity.request`; `nse device activity start`).
        case app
        /// A push to the app's push-to-start token (iOS 17.2).
        case pushToStart = "push-to-start"
    }

    /// How long an activity may stay active: "up to eight hours", after which the system ends it (Apple,
    /// "Displaying live data with Live Activities").
    public static let maximumActiveMilliseconds: Int64 = 8 * 3_600_000
    /// How long an ended activity stays on the lock screen at most: four hours, whatever its dismissal date says.
    public static let maximumShownAfterEndMilliseconds: Int64 = 4 * 3_600_000

    /// ActivityKit's `Activity.id`: an uppercase UUID.
    public var id: String
    /// The `ActivityAttributes` type's name, as `attributes-type` names it in a start push.
    public var attributesType: String
    /// The static attributes it was started with.
    public var attributes: JSONObject
    /// The token its updates are pushed to (lowercase hex); nil for an activity that subscribed to a channel instead.
    public var pushToken: String?
    /// The broadcast channel it subscribed to (`pushType: .channel(id)`, iOS 18), if any.
    public var channelID: String?
    /// What it shows: the last `content-state` applied.
    public var contentState: JSONObject
    /// The `timestamp` (Unix seconds) of the content it shows: a push with an older one is ignored.
    public var timestamp: Int64
    /// When the content goes stale (Unix seconds), if the last update said.
    public var staleDate: Int64?
    /// When an ended activity leaves the lock screen (Unix seconds), if its end said.
    public var dismissalDate: Int64?
    /// Its `relevance-score`, which orders an app's activities, if the last update gave one.
    public var relevanceScore: Double?
    /// The `alert` of the last push that carried one: iOS lights the screen and shows the activity with it.
    public var alert: JSON?
    public var origin: Origin
    /// Unix milliseconds.
    public var startedAt: Int64
    /// When a push or the app ended it (Unix milliseconds); nil while it runs or when the eight hours ended it.
    public var endedAt: Int64?
    /// When a push or the app last changed it (Unix milliseconds).
    public var updatedAt: Int64
    /// How many pushes it has taken (the start push included).
    public var pushes: Int

    public init(
        id: String, attributesType: String, attributes: JSONObject, pushToken: String?, channelID: String?,
        contentState: JSONObject, timestamp: Int64, origin: Origin, startedAt: Int64
    ) {
        self.id = id
        self.attributesType = attributesType
        self.attributes = attributes
        self.pushToken = pushToken
        self.channelID = channelID
        self.contentState = contentState
        self.timestamp = timestamp
        self.origin = origin
        self.startedAt = startedAt
        self.updatedAt = startedAt
        self.pushes = 0
    }

    /// When it ended, at `now` (Unix milliseconds): a push's or the app's end, else the eight-hour limit once passed.
    public func end(at now: Int64) -> Int64? {
        if let endedAt { return endedAt }
        let limit = startedAt + Self.maximumActiveMilliseconds
        return now >= limit ? limit : nil
    }

    /// When it leaves the lock screen, once ended: its dismissal date, at most four hours after the end.
    public func dismissal(at now: Int64) -> Int64? {
        guard let ended = end(at: now) else { return nil }
        let latest = ended + Self.maximumShownAfterEndMilliseconds
        return dismissalDate.map { min($0 * 1000, latest) } ?? latest
    }

    /// Its phase at `now` (Unix milliseconds).
    public func phase(at now: Int64) -> Phase {
        if let dismissal = dismissal(at: now) { return now >= dismissal ? .dismissed : .ended }
        if let staleDate, now >= staleDate * 1000 { return .stale }
        return .active
    }

    /// Whether pushes still change it: active or stale.
    public func isRunning(at now: Int64) -> Bool {
        switch phase(at: now) {
        case .active, .stale: true
        case .ended, .dismissed: false
        }
    }

    /// The document kept in `live-activities.json`.
    public var json: JSON {
        [
            "id": .string(id), "attributes_type": .string(attributesType), "attributes": .object(attributes),
            "push_token": .string(pushToken), "channel_id": .string(channelID),
            "content_state": .object(contentState), "timestamp": .int(timestamp), "stale_date": staleDate.json,
            "dismissal_date": dismissalDate.json, "relevance_score": relevanceScore.json, "alert": alert ?? .null,
            "origin": origin.json, "started_at": .int(startedAt), "ended_at": endedAt.json,
            "updated_at": .int(updatedAt), "pushes": .int(pushes),
        ]
    }

    /// The document with its phase and dates at `now`, as `nse device activity list`, results and the page show it.
    public func json(at now: Int64) -> JSON {
        var object = json.objectValue ?? JSONObject()
        object["phase"] = .string(phase(at: now).rawValue)
        object["ends_at"] = .int(end(at: now) ?? (startedAt + Self.maximumActiveMilliseconds))
        object["dismissed_at"] = dismissal(at: now).json
        return .object(object)
    }

    /// Reads the document; an error names the member.
    public init(json: JSON) throws(JSONFieldError) {
        let document = try JSONObject(json: json)
        self.init(
            id: try document.field("id"), attributesType: try document.field("attributes_type"),
            attributes: try document.field("attributes"), pushToken: try document.field("push_token"),
            channelID: try document.field("channel_id"), contentState: try document.field("content_state"),
            timestamp: try document.field("timestamp"), origin: try document.field("origin"),
            startedAt: try document.field("started_at"))
        staleDate = try document.field("stale_date")
        dismissalDate = try document.field("dismissal_date")
        relevanceScore = try document.field("relevance_score")
        alert = document["alert"].flatMap { $0.isNull ? nil : $0 }
        endedAt = try document.field("ended_at")
        updatedAt = try document.field("updated_at") ?? startedAt
        pushes = try document.field("pushes") ?? 0
    }
}
