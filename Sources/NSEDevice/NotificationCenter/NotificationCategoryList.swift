public import NSEJSON
import NSESystem

/// The app's notification categories, as the system keeps them: the set `setNotificationCategories(_:)` last gave,
/// which replaces the one before whole (Apple). `DIR/notification-categories.json`, `{"categories": [...]}`, each
/// with `identifier`, `actions`, `intent_identifiers`, `options`… (docs/device.md), written atomically; the SDK
/// reads and writes the categories, nse itself only lists their identifiers (`nse device show`).
public struct NotificationCategoryList: Sendable {
    public static let fileName = "notification-categories.json"
    /// Far more than any app registers (a category is a few hundred bytes); a file past it is corrupt.
    static let readLimit = 1 << 20

    public let path: String
    let lockPath: String

    init(containerDirectory: String) {
        path = Path.join(containerDirectory, Self.fileName)
        lockPath = Path.join(containerDirectory, "locks", "notification-categories.lock")
    }

    /// The categories, in the order they were given; none when the app has set none.
    public func categories() throws(DeviceError) -> [JSONObject] {
        guard FileSystem.exists(path) else { return [] }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(path, limit: Self.readLimit) } catch {
            throw DeviceError(.unreadable, error.description)
        }
        guard let bytes else { throw DeviceError(.corrupt, "\(path) is larger than \(Self.readLimit) bytes") }
        guard case .array(let items)? = (try? JSON.parse(bytes))?["categories"] else {
            throw DeviceError(.corrupt, "\(path) has no list of categories")
        }
        return items.compactMap(\.objectValue)
    }

    /// Replaces the categories with these (a category's identifier once: the last one given wins). A file it cannot
    /// read is left as it is and the error thrown: an app that adds to what it read (none, for want of reading)
    /// would otherwise lose every category it had.
    public func replace(with categories: [JSONObject]) throws(DeviceError) {
        var seen: Set<String> = []
        let unique = categories.reversed().filter { category in
            seen.insert(category["identifier"]?.stringValue ?? "").inserted
        }.reversed()
        let bytes = JSON.object(["categories": .array(unique.map(JSON.object))]).serializedBytes()
        guard bytes.count <= Self.readLimit else {
            throw DeviceError(.invalidOption, "the categories take \(bytes.count) bytes, past \(Self.readLimit)")
        }
        // Under a lock: two threads of one process would share the atomic write's temporary file.
        try DeviceFileLock.withLock(lockPath) { () throws(DeviceError) in
            _ = try self.categories()
            do throws(SystemError) { try FileSystem.writeAtomically(path, bytes, mode: 0o600) } catch {
                throw DeviceError(.io, error.description)
            }
        }
    }
}

extension Device {
    /// The app's notification categories.
    public var notificationCategories: NotificationCategoryList {
        NotificationCategoryList(containerDirectory: directory)
    }
}
