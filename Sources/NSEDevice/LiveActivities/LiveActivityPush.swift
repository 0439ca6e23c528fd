public import NSEJSON

/// The `aps` of an ActivityKit push, read as ActivityKit reads it (Apple, "Starting and updating Live Activities with
/// ActivityKit push notifications"): `timestamp` and `event` always, `content-state` to start or update,
/// `attributes-type` and `attributes` to start, and the optional dates, score and alert.
public struct LiveActivityPush: Sendable, Equatable {
    public enum Event: String, Sendable, Equatable, CaseIterable {
        case start, update, end
    }

    /// Why a payload is not one ActivityKit can use: one line naming the member, never its content.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public var event: Event
    /// When the content was made (Unix seconds): ActivityKit ignores one older than what the activity shows.
    public var timestamp: Int64
    public var contentState: JSONObject?
    public var staleDate: Int64?
    public var dismissalDate: Int64?
    public var relevanceScore: Double?
    public var alert: JSON?
    /// For a start: the `ActivityAttributes` type and its attributes.
    public var attributesType: String?
    public var attributes: JSONObject?
    /// For a start: `"input-push-token": 1` asks the system for a push token for the new activity.
    public var inputPushToken: Bool
    /// For a start: the broadcast channel the new activity subscribes to (`input-push-channel`, iOS 18).
    public var inputPushChannel: String?

    /// Reads the payload's `aps`.
    public init(payload: JSON) throws(Problem) {
        guard let aps = payload["aps"]?.objectValue else { throw Problem(description: "no aps object") }
        func integer(_ key: String) throws(Problem) -> Int64? {
            guard let value = aps[key], !value.isNull else { return nil }
            guard let number = value.intValue, number >= 0 else {
                throw Problem(description: "aps.\(key) is not a date in seconds since 1970")
            }
            return number
        }
        guard let timestamp = try integer("timestamp") else {
            throw Problem(description: "aps.timestamp is missing: ActivityKit needs it to order updates")
        }
        guard let name = aps["event"]?.stringValue else {
            throw Problem(description: "aps.event is missing: start, update or end")
        }
        guard let event = Event(rawValue: name) else {
            throw Problem(description: "aps.event is not start, update or end")
        }
        self.event = event
        self.timestamp = timestamp
        if let state = aps["content-state"], !state.isNull {
            guard let object = state.objectValue else {
                throw Problem(description: "aps.content-state is not an object")
            }
            contentState = object
        }
        staleDate = try integer("stale-date")
        dismissalDate = try integer("dismissal-date")
        if let score = aps["relevance-score"], !score.isNull {
            guard let value = score.doubleValue else {
                throw Problem(description: "aps.relevance-score is not a number")
            }
            relevanceScore = value
        }
        if let alert = aps["alert"], !alert.isNull { self.alert = alert }
        attributesType = aps["attributes-type"]?.stringValue
        attributes = aps["attributes"]?.objectValue
        inputPushToken = aps["input-push-token"]?.intValue == 1
        inputPushChannel = aps["input-push-channel"]?.stringValue
        switch event {
        case .start:
            guard attributesType?.isEmpty == false else {
                throw Problem(description: "a start needs aps.attributes-type, the ActivityAttributes type")
            }
            guard attributes != nil else { throw Problem(description: "a start needs aps.attributes, an object") }
            guard contentState != nil else { throw Problem(description: "a start needs aps.content-state") }
        case .update:
            guard contentState != nil else { throw Problem(description: "an update needs aps.content-state") }
        case .end:
            break
        }
    }
}
