import Foundation
import NSEDatabase
import NSETestSupport
import Testing

/// `NSEDatabase`: migrations, transactions, and how durable a write is.
@Suite struct DatabaseTests {
    static let schema = ["CREATE TABLE items (name TEXT PRIMARY KEY, size INTEGER NOT NULL)"]

    func path() throws -> String {
        try TestSupport.temporaryDirectory() + "/test.db"
    }

    func names(_ database: Database) throws -> [String] {
        try database.read { tx throws(DatabaseError) in
            try tx.execute("SELECT name FROM items ORDER BY name").compactMap { $0.text(0) }
        }
    }

    /// `PRAGMA synchronous` as the connection has it: 2 is FULL, 1 is NORMAL.
    func syncMode(_ database: Database) throws -> Int64? {
        try database.read { tx throws(DatabaseError) in try tx.execute("PRAGMA synchronous").first?.integer(0) }
    }

    @Test func aFailedTransactionKeepsNothing() throws {
        let database = try Database(path: try path(), schema: Self.schema)
        #expect(throws: DatabaseError.self) {
            try database.write { tx throws(DatabaseError) in
                try tx.execute("INSERT INTO items VALUES ('a', 1)")
                try tx.execute("INSERT INTO items VALUES ('a', 2)")  // the primary key refuses it
            }
        }
        #expect(try names(database).isEmpty)
    }

    @Test func aNewerSchemaIsRefusedNotMisread() throws {
        let file = try path()
        _ = try Database(path: file, schema: Self.schema + ["ALTER TABLE items ADD COLUMN color TEXT"])
        #expect {
            _ = try Database(path: file, schema: Self.schema)
        } throws: { error in
            (error as? DatabaseError)?.code == .newerSchema
        }
    }

    @Test func eachWriteSyncsAsItsDurabilitySays() throws {
        let database = try Database(path: try path(), schema: Self.schema)
        #expect(try syncMode(database) == 2)
        try database.write(.crashSafe) { tx throws(DatabaseError) in try tx.execute("INSERT INTO items VALUES ('a', 1)")
        }
        #expect(try syncMode(database) == 1)
        try database.write { tx throws(DatabaseError) in try tx.execute("INSERT INTO items VALUES ('b', 2)") }
        #expect(try syncMode(database) == 2)
        try database.write(.crashSafe) { tx throws(DatabaseError) in try tx.execute("INSERT INTO items VALUES ('c', 3)")
        }
        // A single statement outside `write` is durable.
        try database.execute("INSERT INTO items VALUES ('d', 4)")
        #expect(try syncMode(database) == 2)
        #expect(try names(database) == ["a", "b", "c", "d"])
    }

    @Test func aCrashSafeWriteOutlivesItsConnection() throws {
        let file = try path()
        // The writer is never closed, as a process killed right after its commit: another connection sees the write.
        let writer = try Database(path: file, schema: Self.schema)
        try writer.write(.crashSafe) { tx throws(DatabaseError) in
            try tx.execute("INSERT INTO items VALUES ('kept', 1)")
        }
        let other = try Database(path: file, schema: Self.schema)
        #expect(try names(other) == ["kept"])
        withExtendedLifetime(writer) {}
    }

    @Test func theWriteAheadLogStaysWhenTheLastConnectionCloses() throws {
        let file = try path()
        do {
            let database = try Database(path: file, schema: Self.schema)
            try database.write { tx throws(DatabaseError) in try tx.execute("INSERT INTO items VALUES ('a', 1)") }
        }
        // Not checkpointed and not deleted on close: the next short-lived process neither creates it nor waits for a
        // checkpoint's syncs; what it holds is read from it.
        let log = try FileManager.default.attributesOfItem(atPath: file + "-wal")
        #expect((log[.size] as? Int ?? 0) > 0)
        let reopened = try Database(path: file, schema: Self.schema)
        #expect(try names(reopened) == ["a"])
    }
}
