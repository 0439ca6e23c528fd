public import NSEJSON
import NSESystem

/// The device's Notification Center for the app: the notifications shown and not yet removed, and the app's badge.
/// `UNUserNotificationCenter` reads and changes it (docs/sdk.md); the host adds each notification it shows.
///
/// A log of changes, `DIR/notification-center.jsonl`, one JSON line each (`deliver`, `remove`, `remove_all`,
/// `badge`), appended under `DIR/locks/notification-center.lock`: a shown push costs one short append, not a
/// database kept open per device. It is folded when read, and rewritten whole (the newest notifications that fit
/// half of ``compactionBytes``) once it grows past that size. Not synced: a system crash may lose the last changes,
/// as it loses nothing a push was acknowledged for.
public struct NotificationCenterLog: Sendable {
    public static let fileName = "notification-center.jsonl"
    /// Past this size the log is rewritten as its state.
    public static let compactionBytes = 1 << 20
    /// iOS does not document how many notifications Notification Center keeps for an app; nse keeps the newest 256.
    public static let capacity = 256

    /// A notification shown: its request's identifier, when it was shown, the content as delivered (in an APNs
    /// payload's shape) and what the lock screen showed of it.
    public struct Delivered: Sendable, Equatable {
        public var identifier: String
        /// Unix milliseconds.
        public var date: Int64
        public var notification: JSONObject
        public var title: String
        public var subtitle: String
        public var body: String

        public init(
            identifier: String, date: Int64, notification: JSONObject, title: String, subtitle: String, body: String
        ) {
            self.identifier = identifier
            self.date = date
            self.notification = notification
            self.title = title
            self.subtitle = subtitle
            self.body = body
        }

        var json: JSON {
            [
                "identifier": .string(identifier), "date": .int(date), "notification": .object(notification),
                "title": .string(title), "subtitle": .string(subtitle), "body": .string(body),
            ]
        }

        init?(json: JSON) {
            guard let identifier = json["identifier"]?.stringValue, let date = json["date"]?.intValue,
                let notification = json["notification"]?.objectValue
            else { return nil }
            self.init(
                identifier: identifier, date: date, notification: notification,
                title: json["title"]?.stringValue ?? "", subtitle: json["subtitle"]?.stringValue ?? "",
                body: json["body"]?.stringValue ?? "")
        }
    }

    /// What Notification Center shows for the app.
    public struct State: Sendable, Equatable {
        /// Oldest first; one per identifier (a notification with the identifier of a shown one replaces it).
        public var delivered: [Delivered] = []
        /// The app icon's badge: the last `aps.badge` shown or `setBadgeCount`; nil when never set.
        public var badge: Int?

        public init() {}

        mutating func apply(_ line: JSON) {
            if let entry = line["deliver"].flatMap(Delivered.init(json:)) {
                delivered.removeAll { $0.identifier == entry.identifier }
                delivered.append(entry)
                if delivered.count > NotificationCenterLog.capacity {
                    delivered.removeFirst(delivered.count - NotificationCenterLog.capacity)
                }
                if let badge = entry.notification["aps"]?["badge"]?.intValue { self.badge = Int(badge) }
            } else if let identifiers = line["remove"]?.arrayValue {
                let gone = Set(identifiers.compactMap(\.stringValue))
                delivered.removeAll { gone.contains($0.identifier) }
            } else if line["remove_all"]?.boolValue == true {
                delivered.removeAll()
            } else if let badge = line["badge"]?.intValue {
                self.badge = Int(badge)
            }
        }
    }

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

    /// Sets the app icon's badge (`setBadgeCount`; 0 clears it).
    public func setBadge(_ count: Int) throws(DeviceError) {
        try append(["badge": .int(Int64(count))])
    }

    /// The state now.
    public func state() throws(DeviceError) -> State {
        // Nothing shown yet: no lock file made for a read (a container may be read-only).
        guard FileSystem.exists(path) else { return State() }
        return try DeviceFileLock.withLock(lockPath) { () throws(DeviceError) -> State in try read() }
    }

    private func read() throws(DeviceError) -> State {
        var state = State()
        guard FileSystem.exists(path) else { return state }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(path, limit: 4 * Self.compactionBytes) } catch {
            throw DeviceError(.unreadable, error.description)
        }
        guard let bytes else { throw DeviceError(.corrupt, "\(path) is larger than \(4 * Self.compactionBytes) bytes") }
        // A line cut short by a crash is skipped; every whole line is one change.
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            if let change = try? JSON.parse(Array(line)) { state.apply(change) }
        }
        return state
    }

    private func append(_ change: JSON) throws(DeviceError) {
        try DeviceFileLock.withLock(lockPath) { () throws(DeviceError) in
            do throws(SystemError) {
                try FileSystem.append(path, Array((change.serialized() + "\n").utf8), mode: 0o600)
            } catch {
                throw DeviceError(.io, error.description)
            }
            if let size = FileSystem.stamp(path)?.size, size > Self.compactionBytes { try compact() }
        }
    }

    /// Rewrites the log as its state: the badge, then the newest notifications that fit in half the threshold.
    private func compact() throws(DeviceError) {
        let state = try read()
        var lines: [String] = []
        var size = 0
        for entry in state.delivered.reversed() {
            let line = JSON.object(["deliver": entry.json]).serialized() + "\n"
            size += line.utf8.count
            if size > Self.compactionBytes / 2 { break }
            lines.append(line)
        }
        var text = lines.reversed().joined()
        // After the notifications: a shown one's `aps.badge` would otherwise override the badge set after it.
        if let badge = state.badge { text += JSON.object(["badge": .int(Int64(badge))]).serialized() + "\n" }
        do { try FileSystem.writeAtomically(path, Array(text.utf8), mode: 0o600) } catch {
            throw DeviceError(.io, error.description)
        }
    }
}

extension Device {
    /// The app's notifications in Notification Center, and its badge.
    public var notificationCenter: NotificationCenterLog { NotificationCenterLog(containerDirectory: directory) }
}
