import NSEJSON
import NSESystem

/// The device's Notification Center for the app: the notifications shown and not yet removed, and the app's badge.
/// `UNUserNotificationCenter` reads and changes it (docs/sdk.md); the host adds each notification it shows.
///
/// A log of changes, `DIR/notification-center.jsonl`, one JSON line each (`deliver`, `schedule`, `remove`,
/// `remove_all`, `remove_pending`, `remove_all_pending`, `badge`, each with the time it was written, `at`), appended
/// under `DIR/locks/notification-center.lock`: a shown push costs one short append, not a database kept open per
/// device. It is folded when read, a scheduled local notification shown once its time has come (there is no
/// process to wake at that time; what is read is what an iPhone would show), and rewritten whole (the newest
/// notifications that fit half of ``compactionBytes``, every pending one) once it grows past that size. Not synced:
/// a system crash may lose the last changes, as it loses nothing a push was acknowledged for.
public struct NotificationCenterLog: Sendable {
    public static let fileName = "notification-center.jsonl"
    /// Past this size the log is rewritten as its state.
    public static let compactionBytes = 1 << 20
    /// The most it reads: the pending requests alone may take more than ``compactionBytes`` (64 with large
    /// `userInfo`s), and a log past this is corrupt.
    static let readLimit = 16 * compactionBytes
    /// iOS does not document how many notifications Notification Center keeps for an app; nse keeps the newest 256.
    public static let capacity = 256
    /// Apple: "the system keeps the soonest-firing 64 notifications" scheduled by an app.
    public static let pendingCapacity = 64

    public let path: String
    let lockPath: String

    init(containerDirectory: String) {
        path = Path.join(containerDirectory, Self.fileName)
        lockPath = Path.join(containerDirectory, "locks", "notification-center.lock")
    }

    /// Adds a notification shown (replacing one with its identifier).
    public func deliver(_ notification: Delivered) throws(DeviceError) {
        try append(["deliver": notification.json])
    }

    /// Removes the notifications with these identifiers (`removeDeliveredNotifications(withIdentifiers:)`).
    public func remove(identifiers: [String]) throws(DeviceError) {
        try append(["remove": .array(identifiers.map(JSON.string))])
    }

    /// Removes every notification of the app (`removeAllDeliveredNotifications()`).
    public func removeAll() throws(DeviceError) {
        try append(["remove_all": true])
    }

    /// Schedules a local notification (replacing a pending one with its identifier); it is shown once its time comes.
    public func schedule(_ notification: Scheduled) throws(DeviceError) {
        try append(["schedule": notification.json])
    }

    /// Removes the pending local notifications with these identifiers (`removePendingNotificationRequests`).
    public func removePending(identifiers: [String]) throws(DeviceError) {
        try append(["remove_pending": .array(identifiers.map(JSON.string))])
    }

    /// Removes every pending local notification of the app (`removeAllPendingNotificationRequests()`).
    public func removeAllPending() throws(DeviceError) {
        try append(["remove_all_pending": true])
    }

    /// Sets the app icon's badge (`setBadgeCount`; 0 clears it).
    public func setBadge(_ count: Int) throws(DeviceError) {
        try append(["badge": .int(Int64(count))])
    }

    /// The state now: what has fired by now is shown.
    public func state() throws(DeviceError) -> State {
        try state(now: SystemClock.unixMilliseconds())
    }

    /// The state at `now` (Unix milliseconds).
    public func state(now: Int64) throws(DeviceError) -> State {
        // Nothing shown yet: no lock file made for a read (a container may be read-only).
        guard FileSystem.exists(path) else { return State() }
        return try DeviceFileLock.withLock(lockPath) { () throws(DeviceError) -> State in try read(now: now) }
    }

    private func read(now: Int64) throws(DeviceError) -> State {
        var state = State()
        guard FileSystem.exists(path) else { return state }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(path, limit: Self.readLimit) } catch {
            throw DeviceError(.unreadable, error.description)
        }
        guard let bytes else { throw DeviceError(.corrupt, "\(path) is larger than \(Self.readLimit) bytes") }
        // A line cut short by a crash is skipped; every whole line is one change.
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            if let change = try? JSON.parse(Array(line)) { state.apply(change) }
        }
        state.settle(upTo: now)
        return state
    }

    private func append(_ change: JSONObject) throws(DeviceError) {
        try DeviceFileLock.withLock(lockPath) { () throws(DeviceError) in
            // Stamped under the lock: the lines' times only grow.
            var change = change
            change["at"] = .int(SystemClock.unixMilliseconds())
            do throws(SystemError) {
                try FileSystem.append(path, Array((JSON.object(change).serialized() + "\n").utf8), mode: 0o600)
            } catch {
                throw DeviceError(.io, error.description)
            }
            if let size = FileSystem.stamp(path)?.size, size > Self.compactionBytes { try compact() }
        }
    }

    /// Rewrites the log as its state: every pending request (at most ``pendingCapacity``), the newest notifications
    /// that fit in half the threshold, then the badge. The pending ones do not take the notifications' room: 64
    /// repeating calendar triggers with their firings are ~450 KB.
    private func compact() throws(DeviceError) {
        let state = try read(now: SystemClock.unixMilliseconds())
        let pending = state.pending.map { JSON.object(["schedule": $0.json]).serialized() + "\n" }
        var size = 0
        var lines: [String] = []
        for entry in state.delivered.reversed() {
            let line = JSON.object(["deliver": entry.json]).serialized() + "\n"
            size += line.utf8.count
            if size > Self.compactionBytes / 2 { break }
            lines.append(line)
        }
        var text = lines.reversed().joined()
        // After the notifications: a shown one's `aps.badge` would otherwise override the badge set after it.
        if let badge = state.badge { text += JSON.object(["badge": .int(Int64(badge))]).serialized() + "\n" }
        text += pending.joined()
        do { try FileSystem.writeAtomically(path, Array(text.utf8), mode: 0o600) } catch {
            throw DeviceError(.io, error.description)
        }
    }
}

extension Device {
    /// The app's notifications in Notification Center, and its badge.
    public var notificationCenter: NotificationCenterLog { NotificationCenterLog(containerDirectory: directory) }
}
