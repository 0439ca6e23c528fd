import Foundation
import NSEDatabase
import NSETestSupport
import Synchronization
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

    /// Group commit: writes that arrive while a batch commits go together in the next one, each keeps its own
    /// result, and one that fails is rolled back alone.
    @Test func writesWaitingForABatchCommitTogetherAndFailAlone() throws {
        let database = try Database(path: try path(), schema: Self.schema)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let failures = Mutex<[String]>([])
        // Threads of their own: each write blocks its thread until its batch is done.
        func onThread(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        onThread {
            try? database.batchedWrite { tx throws(DatabaseError) in
                try tx.execute("INSERT INTO items VALUES ('first', 1)")
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        // Seven writes queue behind the first batch; the one named 'first' breaks the primary key.
        let names = ["b", "c", "first", "d", "e", "f", "g"]
        for name in names {
            onThread {
                do {
                    let size = try database.batchedWrite { tx throws(DatabaseError) -> Int64 in
                        try tx.execute("INSERT INTO items VALUES (?, 2)", [.text(name)])
                        return try tx.execute("SELECT count(*) FROM items").first?.integer(0) ?? 0
                    }
                    #expect(size >= 2)
                } catch {
                    failures.withLock { $0.append(name) }
                }
            }
        }
        for _ in 0..<2000 where database.batchedWrites.waiting < names.count { usleep(1000) }
        #expect(database.batchedWrites.waiting == names.count)
        release.signal()
        group.wait()
        #expect(failures.withLock { $0 } == ["first"])
        #expect(try self.names(database) == ["b", "c", "d", "e", "f", "first", "g"])
        #expect(database.batchedWrites.batches == 2)
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
