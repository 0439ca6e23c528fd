import NSECrypto
public import NSEJSON
public import NSEPayload

/// What a device's ActivityKit holds (`DIR/live-activities.json`): the app's push-to-start tokens, its Live
/// Activities, whether it asks for frequent updates, and the high-priority updates of the last hour. The rules a
/// push meets on the device are here, pure (``receive(_:token:priority:budget:iosVersion:now:)``), so they are
/// tested without a server.
public struct LiveActivityState: Sendable, Equatable {
    /// The layout version of the file.
    public static let formatVersion: Int64 = 1
    /// How long a dismissed activity is kept, so a late push to its token is recorded as ignored, not refused.
    public static let keptAfterDismissalMilliseconds: Int64 = 24 * 3_600_000
    /// The window the high-priority budget counts over.
    public static let budgetWindowMilliseconds: Int64 = 3_600_000

    /// `NSSupportsLiveActivitiesFrequentUpdates` in the app's Info.plist: its priority-10 updates are not throttled.
    public var frequentUpdates = false
    /// Push-to-start tokens (lowercase hex) by attributes type: one per type, as `pushToStartTokenUpdates` gives.
    public var pushToStartTokens: [String: String] = [:]
    /// Oldest first.
    public var activities: [LiveActivity] = []
    /// When priority-10 updates were applied (Unix milliseconds), within the last hour: what the budget counts.
    public var highPriorityUpdates: [Int64] = []

    public init() {}

    /// What became of a push on the device.
    public struct Delivery: Sendable, Equatable {
        public enum Outcome: String, Sendable, Equatable {
            case started, updated, ended, ignored, throttled
        }

        public var outcome: Outcome
        /// Why, for programs: the reason's first word.
        public var code: ReasonCode
        /// Why, for people: names the activity and dates, never its content.
        public var detail: String
        /// The activity as it is after the push; nil when the push found none.
        public var activity: LiveActivity?

        public init(_ outcome: Outcome, _ code: ReasonCode, _ detail: String, activity: LiveActivity? = nil) {
            self.outcome = outcome
            self.code = code
            self.detail = detail
            self.activity = activity
        }
    }

    /// The token kinds a device answers for beside its app's own: every activity's push token and every
    /// push-to-start token (lowercase hex).
    public var tokens: [String] {
        activities.compactMap(\.pushToken) + pushToStartTokens.values.sorted()
    }

    /// The channels its running activities listen to, at `now`.
    public func channels(at now: Int64) -> Set<String> {
        Set(activities.filter { $0.isRunning(at: now) }.compactMap(\.channelID))
    }

    /// The push-to-start token for `attributesType`, made on first ask, as ActivityKit gives one per type.
    public mutating func pushToStartToken(for attributesType: String) throws(DeviceError) -> String {
        if let token = pushToStartTokens[attributesType] { return token }
        let token = try Self.newToken()
        pushToStartTokens[attributesType] = token
        return token
    }

    /// Starts an activity from the app (in the foreground, `Activity.request`): with a push token of its own, or
    /// subscribed to `channel` instead (`pushType: .channel`), as the app asks.
    public mutating func start(
        attributesType: String, attributes: JSONObject, contentState: JSONObject, channel: String?, now: Int64
    ) throws(DeviceError) -> LiveActivity {
        prune(now: now)
        var activity = LiveActivity(
            id: try Self.newID(), attributesType: attributesType, attributes: attributes,
            pushToken: channel == nil ? try Self.newToken() : nil, channelID: channel, contentState: contentState,
            timestamp: now / 1000, origin: .app, startedAt: now)
        activity.updatedAt = now
        activities.append(activity)
        return activity
    }

    /// The app ends an activity (`Activity.end`); `dismissal` in Unix seconds, nil for the default four hours.
    /// Nil when no running activity has that id.
    public mutating func end(id: String, dismissal: Int64?, now: Int64) -> LiveActivity? {
        guard let index = activities.firstIndex(where: { $0.id.lowercased() == id.lowercased() }),
            activities[index].isRunning(at: now)
        else { return nil }
        activities[index].endedAt = now
        activities[index].dismissalDate = dismissal
        activities[index].updatedAt = now
        return activities[index]
    }

    /// The activity that `token` reaches: its push token, or its id (a broadcast names the activity it reaches).
    public func activity(for token: String) -> LiveActivity? {
        let lowered = token.lowercased()
        return activities.first { $0.pushToken == lowered || $0.id.lowercased() == lowered }
    }

    /// A push arriving on the device, as ActivityKit takes it:
    /// - to a push-to-start token, only a `start` of that token's attributes type, which starts an activity (with a
    ///   push token of its own when the push asks with `input-push-token`, subscribed to `input-push-channel` from
    ///   iOS 18);
    /// - to an activity, an `update` or `end` whose `timestamp` is not older than the content it shows ("If this is
    ///   older than a previous update or push payload, the system ignores this update"), while it is running;
    /// - a priority-10 `update` or `end` counts against the app's budget: past `budget` in the last hour it is
    ///   throttled, unless the app declares frequent updates. Priority 5 never counts. Nil `budget`: no limit.
    public mutating func receive(
        _ push: LiveActivityPush, token: String, priority: Int, budget: Int?, iosVersion: IOSVersion, now: Int64
    ) throws(DeviceError) -> Delivery {
        prune(now: now)
        let lowered = token.lowercased()
        if let index = activities.firstIndex(where: { $0.pushToken == lowered || $0.id.lowercased() == lowered }) {
            return apply(push, to: index, priority: priority, budget: budget, now: now)
        }
        guard let type = pushToStartTokens.first(where: { $0.value == lowered })?.key else {
            return Delivery(
                .ignored, .activityNotActive, "no activity or push-to-start token of the app has this token")
        }
        guard push.event == .start else {
            return Delivery(
                .ignored, .activityPayloadInvalid, "a push-to-start token takes only event start, not \(push.event)")
        }
        guard push.attributesType == type, let attributes = push.attributes, let state = push.contentState else {
            return Delivery(
                .ignored, .activityPayloadInvalid,
                "the push-to-start token is for attributes type \(type), the push names another")
        }
        let channel = iosVersion >= LiveActivityRelease.channels ? push.inputPushChannel : nil
        var activity = LiveActivity(
            id: try Self.newID(), attributesType: type, attributes: attributes,
            pushToken: push.inputPushToken && channel == nil ? try Self.newToken() : nil, channelID: channel,
            contentState: state, timestamp: push.timestamp, origin: .pushToStart, startedAt: now)
        activity.staleDate = push.staleDate
        activity.relevanceScore = push.relevanceScore
        activity.alert = push.alert
        activity.pushes = 1
        activities.append(activity)
        let how =
            channel != nil
            ? "subscribed to its channel"
            : activity.pushToken != nil ? "with a push token for its updates" : "with no token"
        return Delivery(
            .started, .activityStarted, "activity \(activity.id) of type \(type) started, \(how)", activity: activity)
    }

    private mutating func apply(
        _ push: LiveActivityPush, to index: Int, priority: Int, budget: Int?, now: Int64
    ) -> Delivery {
        var activity = activities[index]
        guard push.event != .start else {
            return Delivery(
                .ignored, .activityPayloadInvalid, "a start goes to a push-to-start token, not to a running activity",
                activity: activity)
        }
        guard activity.isRunning(at: now) else {
            return Delivery(
                .ignored, .activityNotActive, "activity \(activity.id) is \(activity.phase(at: now).rawValue)",
                activity: activity)
        }
        guard push.timestamp >= activity.timestamp else {
            return Delivery(
                .ignored, .activityOutOfOrder,
                "timestamp \(push.timestamp) is older than the \(activity.timestamp) of the content shown",
                activity: activity)
        }
        if priority == 10, let budget, !frequentUpdates {
            guard highPriorityUpdates.count < budget else {
                return Delivery(
                    .throttled, .activityBudgetExceeded,
                    "\(highPriorityUpdates.count) priority-10 updates in the last hour, the budget is \(budget)",
                    activity: activity)
            }
            highPriorityUpdates.append(now)
        }
        if let state = push.contentState { activity.contentState = state }
        activity.timestamp = push.timestamp
        activity.relevanceScore = push.relevanceScore ?? activity.relevanceScore
        activity.alert = push.alert ?? activity.alert
        activity.updatedAt = now
        activity.pushes += 1
        let delivery: Delivery
        switch push.event {
        case .update, .start:
            activity.staleDate = push.staleDate
            delivery = Delivery(.updated, .activityUpdated, "activity \(activity.id) shows the new content")
        case .end:
            activity.endedAt = now
            activity.dismissalDate = push.dismissalDate
            if let staleDate = push.staleDate { activity.staleDate = staleDate }
            let until = activity.dismissal(at: now).map { "until \($0 / 1000)" } ?? ""
            delivery = Delivery(.ended, .activityEnded, "activity \(activity.id) ended, on the lock screen \(until)")
        }
        activities[index] = activity
        var done = delivery
        done.activity = activity
        return done
    }

    /// Forgets what no longer counts: budget entries older than an hour, activities dismissed a day ago.
    public mutating func prune(now: Int64) {
        highPriorityUpdates.removeAll { $0 <= now - Self.budgetWindowMilliseconds }
        activities.removeAll { activity in
            guard let dismissal = activity.dismissal(at: now) else { return false }
            return now - dismissal > Self.keptAfterDismissalMilliseconds
        }
    }

    static func newToken() throws(DeviceError) -> String {
        do { return try SecureRandom.hex(32) } catch { throw DeviceError(.io, error.description) }
    }

    static func newID() throws(DeviceError) -> String {
        do { return try SecureRandom.uuid().uppercased() } catch { throw DeviceError(.io, error.description) }
    }

    /// The document of `live-activities.json`.
    public var json: JSON {
        [
            "format": .int(Self.formatVersion),
            "info": ["NSSupportsLiveActivitiesFrequentUpdates": .bool(frequentUpdates)],
            "push_to_start_tokens": .object(
                JSONObject(pushToStartTokens.sorted { $0.key < $1.key }.map { (key: $0.key, value: .string($0.value)) })
            ),
            "activities": .array(activities.map(\.json)),
            "budget": ["priority_10_at": .array(highPriorityUpdates.map { .int($0) })],
        ]
    }

    /// Reads the document; an error names the member.
    public init(json: JSON) throws(JSONFieldError) {
        let document = try JSONObject(json: json)
        let format: Int64 = try document.field("format")
        guard format == Self.formatVersion else {
            throw JSONFieldError(
                path: ["format"], expected: "\(Self.formatVersion), the format this build reads",
                problem: .found(String(format)))
        }
        frequentUpdates = try document.field("info", "NSSupportsLiveActivitiesFrequentUpdates") ?? false
        let tokens: JSONObject = try document.field("push_to_start_tokens") ?? JSONObject()
        for (type, value) in tokens {
            guard let token = value.stringValue else {
                throw JSONFieldError(expected: "a token", butGot: value).inside(["push_to_start_tokens", type])
            }
            pushToStartTokens[type] = token.lowercased()
        }
        let list = document["activities"] ?? .array([])
        guard let items = list.arrayValue else {
            throw JSONFieldError(expected: "an array", butGot: list).inside(["activities"])
        }
        for (index, item) in items.enumerated() {
            do { activities.append(try LiveActivity(json: item)) } catch {
                throw error.inside(["activities", String(index)])
            }
        }
        highPriorityUpdates = (document["budget"]?["priority_10_at"]?.arrayValue ?? []).compactMap(\.intValue)
    }
}

/// The releases Live Activities need, as ActivityKit's availability says.
public enum LiveActivityRelease {
    /// ActivityKit: iOS 16.1.
    public static let activities = IOSVersion(major: 16, minor: 1)
    /// `pushToStartTokenUpdates`: iOS 17.2.
    public static let pushToStart = IOSVersion(major: 17, minor: 2)
    /// `PushType.channel(_:)`: iOS 18.
    public static let channels = IOSVersion(major: 18)
}
