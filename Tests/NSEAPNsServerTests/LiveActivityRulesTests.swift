import Foundation
import NSEDevice
import NSEJSON
import NSEPayload
import NSETestSupport
import Testing

/// ActivityKit's rules as a device applies a push (``LiveActivityState``), without a server: push-to-start, the
/// timestamp order, ends and dismissal, the phases in time, and the priority-10 budget.
@Suite struct LiveActivityRulesTests {
    static let hour: Int64 = 3_600_000
    static let start: Int64 = 1_800_000_000_000

    func push(_ text: String) throws -> LiveActivityPush {
        try LiveActivityPush(payload: try JSON.parse(text))
    }

    func update(_ timestamp: Int64, eta: String = "5 min") throws -> LiveActivityPush {
        try push(#"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"eta":"\#(eta)"}}}"#)
    }

    /// A state with one activity started by the app at `start`, and its push token.
    func running() throws -> (LiveActivityState, String) {
        var state = LiveActivityState()
        let activity = try state.start(
            attributesType: "Delivery", attributes: ["order": "42"], contentState: ["eta": "10 min"], channel: nil,
            now: Self.start)
        return (state, try #require(activity.pushToken))
    }

    @Test(arguments: [
        (#"{"aps":{"event":"update","content-state":{}}}"#, "aps.timestamp is missing"),
        (#"{"aps":{"timestamp":"soon","event":"update","content-state":{}}}"#, "aps.timestamp is not a date"),
        (#"{"aps":{"timestamp":1,"content-state":{}}}"#, "aps.event is missing"),
        (#"{"aps":{"timestamp":1,"event":"pause","content-state":{}}}"#, "aps.event is not start, update or end"),
        (#"{"aps":{"timestamp":1,"event":"update"}}"#, "an update needs aps.content-state"),
        (#"{"aps":{"timestamp":1,"event":"update","content-state":[1]}}"#, "aps.content-state is not an object"),
        (#"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes":{}}}"#, "aps.attributes-type"),
        (#"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"T"}}"#, "aps.attributes"),
        (#"{"aps":{"timestamp":1,"event":"end","relevance-score":"high"}}"#, "aps.relevance-score is not a number"),
        (#"{"alert":"no aps"}"#, "no aps object"),
    ])
    func payloadsActivityKitCannotUseAreNamed(_ payload: String, _ problem: String) throws {
        #expect(throws: LiveActivityPush.Problem.self) { try push(payload) }
        do { _ = try push(payload) } catch { #expect("\(error)".contains(problem), "\(error)") }
    }

    @Test func aFullStartReadsEveryKey() throws {
        let read = try push(
            #"{"aps":{"timestamp":100,"event":"start","content-state":{"eta":"5"},"attributes-type":"Delivery","attributes":{"order":"42"},"stale-date":200,"dismissal-date":300,"relevance-score":75,"alert":{"title":"On its way","body":"5 min"},"input-push-token":1,"input-push-channel":"c29tZUNoYW5uZWwxMjM0NQ=="}}"#
        )
        #expect(read.event == .start && read.timestamp == 100 && read.attributesType == "Delivery")
        #expect(read.attributes == ["order": "42"] && read.contentState == ["eta": "5"])
        #expect(read.staleDate == 200 && read.dismissalDate == 300 && read.relevanceScore == 75)
        #expect(read.inputPushToken && read.inputPushChannel == "c29tZUNoYW5uZWwxMjM0NQ==")
        #expect(read.alert?["title"] == "On its way")
    }

    @Test func aPushToStartTokenStartsAnActivityOfItsTypeOnly() throws {
        var state = LiveActivityState()
        let token = try state.pushToStartToken(for: "Delivery")
        #expect(try state.pushToStartToken(for: "Delivery") == token, "one token per type")
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        let other = try push(
            #"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"Score","attributes":{}}}"#)
        let refused = try state.receive(
            other, token: token, priority: 10, budget: nil, iosVersion: .current, now: Self.start)
        #expect(refused.outcome == .ignored && refused.code == .activityPayloadInvalid)
        let notStart = try state.receive(
            try update(1), token: token, priority: 10, budget: nil, iosVersion: .current, now: Self.start)
        #expect(notStart.code == .activityPayloadInvalid && state.activities.isEmpty)

        let start = try push(
            #"{"aps":{"timestamp":5,"event":"start","content-state":{"eta":"9 min"},"attributes-type":"Delivery","attributes":{"order":"7"},"input-push-token":1}}"#
        )
        let started = try state.receive(
            start, token: token.uppercased(), priority: 10, budget: nil, iosVersion: .current, now: Self.start)
        #expect(started.outcome == .started && started.code == .activityStarted)
        let activity = try #require(started.activity)
        #expect(activity.origin == .pushToStart && activity.contentState == ["eta": "9 min"] && activity.timestamp == 5)
        #expect(activity.pushToken?.count == 64 && activity.pushToken != token)
        #expect(state.tokens.contains(activity.pushToken ?? "") && state.tokens.contains(token))
        // Without input-push-token, no token for updates; on iOS 18 input-push-channel subscribes it instead.
        let channelStart = try push(
            #"{"aps":{"timestamp":6,"event":"start","content-state":{},"attributes-type":"Delivery","attributes":{},"input-push-channel":"Y2hhbm5lbA=="}}"#
        )
        let onChannel = try state.receive(
            channelStart, token: token, priority: 5, budget: nil, iosVersion: .current, now: Self.start)
        #expect(onChannel.activity?.channelID == "Y2hhbm5lbA==" && onChannel.activity?.pushToken == nil)
        let old = try state.receive(
            channelStart, token: token, priority: 5, budget: nil, iosVersion: IOSVersion(major: 17, minor: 4),
            now: Self.start)
        #expect(old.activity?.channelID == nil, "iOS 17 has no channels")
        #expect(state.activities.count == 3)
    }

    @Test func anUpdateOlderThanTheContentShownIsIgnored() throws {
        var (state, token) = try running()
        let shown = Self.start / 1000
        let newer = try state.receive(
            try update(shown + 10, eta: "3 min"), token: token, priority: 5, budget: nil, iosVersion: .current,
            now: Self.start + 1000)
        #expect(newer.outcome == .updated && newer.activity?.contentState == ["eta": "3 min"])
        let older = try state.receive(
            try update(shown + 5, eta: "8 min"), token: token, priority: 5, budget: nil, iosVersion: .current,
            now: Self.start + 2000)
        #expect(older.outcome == .ignored && older.code == .activityOutOfOrder)
        #expect(state.activities[0].contentState == ["eta": "3 min"] && state.activities[0].timestamp == shown + 10)
        // The same timestamp again is not older: applied (a copy of the same content changes nothing shown).
        let same = try state.receive(
            try update(shown + 10, eta: "3 min"), token: token, priority: 5, budget: nil, iosVersion: .current,
            now: Self.start + 3000)
        #expect(same.outcome == .updated && state.activities[0].pushes == 2)
    }

    @Test func anEndedActivityStaysUntilItsDismissalAndTakesNoMoreUpdates() throws {
        var (state, token) = try running()
        let shown = Self.start / 1000
        let dismissal = shown + 600
        let end = try push(
            #"{"aps":{"timestamp":\#(shown + 1),"event":"end","content-state":{"eta":"arrived"},"dismissal-date":\#(dismissal)}}"#
        )
        let ended = try state.receive(
            end, token: token, priority: 10, budget: nil, iosVersion: .current, now: Self.start + 1000)
        #expect(ended.outcome == .ended && ended.activity?.contentState == ["eta": "arrived"])
        let activity = state.activities[0]
        #expect(activity.phase(at: Self.start + 2000) == .ended)
        #expect(activity.phase(at: dismissal * 1000) == .dismissed)
        let late = try state.receive(
            try update(shown + 2), token: token, priority: 5, budget: nil, iosVersion: .current, now: Self.start + 3000)
        #expect(late.outcome == .ignored && late.code == .activityNotActive)
        // A dismissal date past the four hours is cut to them.
        var (other, otherToken) = try running()
        let far = try push(#"{"aps":{"timestamp":\#(shown + 1),"event":"end","dismissal-date":\#(shown + 86_400)}}"#)
        _ = try other.receive(far, token: otherToken, priority: 5, budget: nil, iosVersion: .current, now: Self.start)
        #expect(other.activities[0].dismissal(at: Self.start) == Self.start + 4 * Self.hour)
    }

    @Test func phasesFollowTheClock() throws {
        var (state, token) = try running()
        let stale = try push(
            #"{"aps":{"timestamp":\#(Self.start / 1000 + 1),"event":"update","content-state":{},"stale-date":\#(Self.start / 1000 + 60)}}"#
        )
        _ = try state.receive(stale, token: token, priority: 5, budget: nil, iosVersion: .current, now: Self.start)
        let activity = state.activities[0]
        #expect(activity.phase(at: Self.start + 59_000) == .active)
        #expect(activity.phase(at: Self.start + 60_000) == .stale)
        #expect(activity.isRunning(at: Self.start + 60_000), "a stale activity still takes updates")
        // Eight hours after its start the system ends it, and four hours later it is gone.
        #expect(activity.phase(at: Self.start + 8 * Self.hour) == .ended)
        #expect(activity.end(at: Self.start + 9 * Self.hour) == Self.start + 8 * Self.hour)
        #expect(activity.phase(at: Self.start + 12 * Self.hour) == .dismissed)
        // A day after that it is forgotten, its token with it.
        state.prune(now: Self.start + 37 * Self.hour)
        #expect(state.activities.isEmpty && !state.tokens.contains(token))
    }

    @Test func priorityTenUpdatesDrawDownTheHoursBudget() throws {
        var (state, token) = try running()
        var timestamp = Self.start / 1000
        func send(_ priority: Int, at now: Int64) throws -> LiveActivityState.Delivery {
            timestamp += 1
            return try state.receive(
                try update(timestamp), token: token, priority: priority, budget: 2, iosVersion: .current, now: now)
        }
        #expect(try send(10, at: Self.start).outcome == .updated)
        #expect(try send(5, at: Self.start + 1).outcome == .updated, "priority 5 never counts")
        #expect(try send(10, at: Self.start + 2).outcome == .updated)
        let over = try send(10, at: Self.start + 3)
        #expect(over.outcome == .throttled && over.code == .activityBudgetExceeded)
        #expect(over.detail.contains("2 priority-10 updates in the last hour"))
        #expect(try send(5, at: Self.start + 4).outcome == .updated)
        // An hour after the first, one place is free again.
        #expect(try send(10, at: Self.start + Self.hour + 1).outcome == .updated)
        #expect(try send(10, at: Self.start + Self.hour + 1).outcome == .throttled)
        // An app that declares NSSupportsLiveActivitiesFrequentUpdates is not throttled.
        state.frequentUpdates = true
        #expect(try send(10, at: Self.start + Self.hour + 3).outcome == .updated)
    }

    @Test func theFileFormatReadsBackTheSame() throws {
        var (state, _) = try running()
        _ = try state.pushToStartToken(for: "Score")
        state.frequentUpdates = true
        state.highPriorityUpdates = [Self.start]
        state.activities[0].staleDate = 99
        state.activities[0].alert = ["title": "Hi"]
        let read = try LiveActivityState(json: try JSON.parse(state.json.serialized()))
        #expect(read == state)
        #expect(throws: JSONFieldError.self) { try LiveActivityState(json: ["format": 2]) }
        #expect(throws: JSONFieldError.self) {
            try LiveActivityState(json: ["format": 1, "activities": [["id": 1]]])
        }
    }

    @Test func theStoreWritesOwnerOnlyAndKeepsEveryWritersChange() async throws {
        let root = try TestSupport.temporaryDirectory("nse-activity-store")
        let device = try Device.create(at: root + "/bob")
        let store = device.liveActivities
        #expect(try store.read() == LiveActivityState())
        // Eight writers at once, each starting an activity: none is lost.
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    _ = try? store.update { state throws(DeviceError) in
                        try state.start(
                            attributesType: "T\(index)", attributes: [:], contentState: [:], channel: nil,
                            now: Self.start)
                    }
                }
            }
        }
        #expect(try store.read().activities.count == 8)
        #expect(try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int == 0o600)
        try TestSupport.write("{not json", to: store.path)
        #expect(throws: DeviceError.self) { try store.read() }
    }
}
