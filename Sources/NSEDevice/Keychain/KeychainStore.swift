import NSEDatabase
import NSEJSON
import NSESystem

/// The device's keychain (`keychain.db` in its container, beside the App Group store and apart from it, as iOS keeps
/// the keychain apart from the app's files): the items the app and its extension keep with Security's `SecItem…`
/// calls, and `nse device keychain` writes for the app. Each item is of a class (`genp`, `inet`), in one access group,
/// with its attributes under Apple's keys (`acct`, `svce`, `srvr`…) and its secret bytes. What makes two items the
/// same, which groups a process may reach and how a query matches are Security's rules, not the store's: the store
/// only keeps them, each change in one transaction, durable before it returns.
public struct KeychainStore: Sendable {
    /// The file in the device's container.
    public static let fileName = "keychain.db"

    private static let schema = [
        """
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            class TEXT NOT NULL,
            access_group TEXT NOT NULL,
            attributes TEXT NOT NULL,
            data BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            modified_at INTEGER NOT NULL
        );
        CREATE INDEX items_by_class ON items (class, access_group);
        """
    ]

    let database: Database

    /// Opens (creating it the first time) the keychain of the device in `containerDirectory`; mode 0600.
    public init(containerDirectory: String) throws(DeviceError) {
        do {
            database = try Database(path: Path.join(containerDirectory, Self.fileName), schema: Self.schema)
        } catch {
            throw error.deviceError(in: "keychain")
        }
    }

    /// Adds `item` unless an item of its class and group already has the same `identity` (the attributes that make
    /// an item of that class unique): `false` then, and nothing is written.
    public func add(_ item: KeychainItem, identity: Set<String>) throws(DeviceError) -> Bool {
        try write { tx throws(DatabaseError) -> Bool in
            let existing = try Self.items(tx, itemClass: item.itemClass, groups: [item.accessGroup])
            guard !existing.contains(where: { $0.item.sameIdentity(as: item, keys: identity) }) else { return false }
            try tx.execute(
                "INSERT INTO items (class, access_group, attributes, data, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .text(item.itemClass), .text(item.accessGroup), .text(item.attributesJSON.serialized()),
                    .blob(item.data), .integer(item.createdAt), .integer(item.modifiedAt),
                ])
            return true
        }
    }

    /// The items of `itemClass` in `groups` that `matches` accepts, oldest first.
    public func items(itemClass: String, groups: [String], where matches: (KeychainItem) -> Bool) throws(DeviceError)
        -> [KeychainItem]
    {
        do {
            return try database.read { tx throws(DatabaseError) in
                try Self.items(tx, itemClass: itemClass, groups: groups).map(\.item).filter(matches)
            }
        } catch {
            throw error.deviceError(in: "keychain")
        }
    }

    /// What an update did.
    public enum UpdateOutcome: Sendable, Equatable {
        case updated(Int)
        case noneMatched
        /// The change would make an item the same as another one (nothing was written).
        case duplicate
    }

    /// Changes every item of `itemClass` in `groups` that `matches` accepts with `change`, in one transaction. When
    /// a changed item would have the identity of another item (in its new group) nothing is written: `duplicate`.
    public func update(
        itemClass: String, groups: [String], identity: Set<String>, where matches: (KeychainItem) -> Bool,
        change: (inout KeychainItem) -> Void
    ) throws(DeviceError) -> UpdateOutcome {
        try write { tx throws(DatabaseError) -> UpdateOutcome in
            let found = try Self.items(tx, itemClass: itemClass, groups: groups).filter { matches($0.item) }
            guard !found.isEmpty else { return .noneMatched }
            let changed = found.map { entry in
                var item = entry.item
                change(&item)
                return (id: entry.id, item: item)
            }
            let ids = Set(changed.map(\.id))
            let destinations = Array(Set(changed.map(\.item.accessGroup)))
            let unchanged = try Self.items(tx, itemClass: itemClass, groups: destinations).filter {
                !ids.contains($0.id)
            }
            let all = unchanged + changed
            for entry in changed
            where all.contains(where: {
                $0.id != entry.id && $0.item.accessGroup == entry.item.accessGroup
                    && $0.item.sameIdentity(as: entry.item, keys: identity)
            }) {
                return .duplicate
            }
            for (id, item) in changed {
                try tx.execute(
                    "UPDATE items SET access_group = ?, attributes = ?, data = ?, modified_at = ? WHERE id = ?",
                    [
                        .text(item.accessGroup), .text(item.attributesJSON.serialized()), .blob(item.data),
                        .integer(item.modifiedAt), .integer(id),
                    ])
            }
            return .updated(changed.count)
        }
    }

    /// Deletes every item of `itemClass` in `groups` that `matches` accepts; how many went.
    public func delete(itemClass: String, groups: [String], where matches: (KeychainItem) -> Bool) throws(DeviceError)
        -> Int
    {
        try write { tx throws(DatabaseError) -> Int in
            let found = try Self.items(tx, itemClass: itemClass, groups: groups).filter { matches($0.item) }
            for (id, _) in found { try tx.execute("DELETE FROM items WHERE id = ?", [.integer(id)]) }
            return found.count
        }
    }

    private func write<T>(_ body: (borrowing Database.Transaction) throws(DatabaseError) -> T) throws(DeviceError) -> T
    {
        do {
            return try database.write(.durable, body)
        } catch {
            throw error.deviceError(in: "keychain")
        }
    }

    private static func items(_ tx: borrowing Database.Transaction, itemClass: String, groups: [String])
        throws(DatabaseError) -> [(id: Int64, item: KeychainItem)]
    {
        guard !groups.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: groups.count).joined(separator: ", ")
        let rows = try tx.execute(
            """
            SELECT id, access_group, attributes, data, created_at, modified_at FROM items
            WHERE class = ? AND access_group IN (\(marks)) ORDER BY id
            """, [.text(itemClass)] + groups.map(SQLValue.text))
        return rows.compactMap { row in
            guard let id = row.integer(0), let group = row.text(1),
                let attributes = row.text(2).flatMap({ try? JSON.parse($0) }).flatMap(KeychainItem.attributes(from:))
            else { return nil }
            return (
                id,
                KeychainItem(
                    itemClass: itemClass, accessGroup: group, attributes: attributes, data: row.blob(3) ?? [],
                    createdAt: row.integer(4) ?? 0, modifiedAt: row.integer(5) ?? 0)
            )
        }
    }
}
