import Foundation
import NSEDatabase
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// The App Group store (`app-group.db`): held and shown messages, strikes and the call log, shared by processes.
@Suite struct AppGroupStoreTests {
    func message(_ callID: String, at time: Int64 = 1_000_000, body: String = "nse1.x.y.z") -> StoredMessage {
        StoredMessage(
            callID: callID, from: "sip:alice@example.org", to: "sip:bob@example.org", contentType: "text/plain",
            body: Array(body.utf8), receivedAt: time)
    }

    func store() throws -> AppGroupStore {
        try AppGroupStore(containerDirectory: try TestSupport.temporaryDirectory())
    }

    @Test func keepsDuplicatesOnceAndHandsOutOnce() throws {
        let store = try store().messages
        #expect(try store.keep(message("a@host", at: 1000), now: 1000) == .kept)
        #expect(try store.keep(message("a@host", at: 1001), now: 1001) == .duplicate)
        #expect(try store.keep(message("b@host;weird/chars\u{0}nul", at: 1002), now: 1002) == .kept)
        #expect(try store.held(now: 2000).map(\.callID) == ["a@host", "b@host;weird/chars\u{0}nul"])
        #expect(try store.take(callID: "a@host", now: 2000) == message("a@host", at: 1000))
        #expect(try store.take(callID: "a@host", now: 2000) == nil)
        #expect(try !store.contains(callID: "a@host", now: 2000))
        #expect(try store.contains(callID: "b@host;weird/chars\u{0}nul", now: 2000))
        #expect(try store.take(callID: "b@host;weird/chars", now: 2000) == nil)
    }

    @Test func aShownMessageIsNotKeptAgain() throws {
        let store = try store().messages
        // Shown from the network by one extension process: a copy another process received is not kept.
        try store.markShown(callID: "shown@host", now: 1000)
        #expect(try store.keep(message("shown@host", at: 1001), now: 1001) == .alreadyShown)
        #expect(try store.take(callID: "shown@host", now: 1002) == nil)
        // Held first, then shown from the network elsewhere: the held copy goes.
        try store.keep(message("raced@host", at: 1000), now: 1000)
        try store.markShown(callID: "raced@host", now: 1001)
        #expect(try store.take(callID: "raced@host", now: 1002) == nil)
        #expect(try store.held(now: 1002).isEmpty)
    }

    /// Every fetch purges first, then looks for its Call-ID; with nothing to purge and nothing kept under it, both only
    /// read, so they do not wait for (nor hold up) another process of the container writing at the same time. They
    /// took the write lock before: 10 s each, then `busy`.
    @Test func aPurgeWithNothingDueDoesNotWaitForAnotherWriter() throws {
        let directory = try TestSupport.temporaryDirectory()
        let store = try AppGroupStore(containerDirectory: directory).messages
        try store.keep(message("fresh@host", at: 1_000), now: 1_000)
        try store.markShown(callID: "shown@host", now: 1_000)
        let other = try AppGroupStore(containerDirectory: directory)
        var purged: Result<Int, DeviceError>?
        var claimed: Result<MessageStore.Claim, DeviceError>?
        try other.database.write(.crashSafe) { tx throws(DatabaseError) in
            try tx.execute("INSERT INTO strikes (reason, at) VALUES ('test', 1)")
            purged = Result { () throws(DeviceError) in try store.purge(now: 2_000) }
            // Nor does a claim of a Call-ID the store does not have (the fetch then waits for the network).
            claimed = Result { () throws(DeviceError) in try store.claim(callID: "absent@host", now: 2_000) }
        }
        #expect(try purged?.get() == 0)
        #expect(try claimed?.get() == .absent)
        #expect(try store.held(now: 2_000).map(\.callID) == ["fresh@host"])
    }

    @Test func aMessageNoPushNamedInTimeIsKeptForTheAppThenForgottenAfterADay() throws {
        let store = try store().messages
        try store.keep(message("old@host", at: 0), now: 0)
        #expect(try store.take(callID: "old@host", now: 5 * 60 * 1000 + 1) == nil)
        try store.keep(message("fresh@host", at: 1_000), now: 1_000)
        #expect(try store.take(callID: "fresh@host", now: 5 * 60 * 1000) != nil)
        try store.markShown(callID: "fresh@host", now: 5 * 60 * 1000)
        // Not named by a push in time: no longer handed to one, but kept, body and all, for the app.
        #expect(try store.purge(now: 5 * 60 * 1000 + 2) == 0)
        #expect(try store.unnotified() == [message("old@host", at: 0)])
        #expect(try store.take(callID: "old@host", now: 5 * 60 * 1000 + 3) == nil)
        #expect(try store.keep(message("old@host", at: 0), now: 5 * 60 * 1000 + 3) == .duplicate)
        // A day on, the unnotified message and the shown one's Call-ID are forgotten.
        #expect(try store.purge(now: 24 * 3600 * 1000 + 5 * 60 * 1000 + 1) == 2)
        #expect(try store.unnotified().isEmpty)
        #expect(try store.keep(message("fresh@host", at: 1_000), now: 1_000) == .kept)
    }

    /// A pid no process has: above Linux's largest `pid_max` (2^22).
    static let deadProcess: Int32 = 0x3FFF_FFFF

    @Test func aClaimOfADeadProcessGoesBackToHeld() throws {
        let store = try store().messages
        try store.keep(message("killed@host", at: 1000), now: 1000)
        try store.keep(message("alive@host", at: 1000), now: 1000)
        // Claimed by an extension that is killed before it hands the content to the host, and by this (live) one.
        #expect(try store.take(callID: "killed@host", now: 2000, claimer: Self.deadProcess) != nil)
        #expect(try store.take(callID: "alive@host", now: 2000) != nil)
        #expect(try store.take(callID: "killed@host", now: 2001) == nil)
        #expect(try store.held(now: 2001).isEmpty)
        // The next purge gives the dead claimer's message back, body and all; the live claim stays.
        try store.purge(now: 3000)
        #expect(try store.held(now: 3000).map(\.callID) == ["killed@host"])
        #expect(try store.take(callID: "killed@host", now: 3000) == message("killed@host", at: 1000))
        #expect(try store.take(callID: "alive@host", now: 3000) == nil)
        // Shown by its claimer: gone for good, and a copy arriving later is not kept.
        try store.markShown(callID: "alive@host", now: 3001)
        try store.purge(now: 3002)
        #expect(try store.take(callID: "alive@host", now: 3003) == nil)
        #expect(try store.keep(message("alive@host", at: 3003), now: 3003) == .alreadyShown)
    }

    /// Two extension processes woken for one message (a server that pushed twice) both receive it from the network:
    /// one transaction decides which shows it, and a push for it while it is being shown learns so at once
    /// (issue #31, defect 5).
    @Test func oneMessageArrivingInTwoProcessesIsShownByOne() throws {
        let store = try store().messages
        // pid 1 (init) always runs: "another extension process that is alive".
        let other: Int32 = 1
        #expect(
            try store.claimArrived(message("twice@host", at: 1000), now: 1000)
                == .claimed(message("twice@host", at: 1000)))
        #expect(try store.claimArrived(message("twice@host", at: 1000), now: 1001, claimer: other) == .claimedElsewhere)
        #expect(try store.claim(callID: "twice@host", now: 1002, claimer: other) == .claimedElsewhere)
        // The other way round: the second process's copy was held by an earlier flush; the first to claim shows it.
        try store.keep(message("held@host", at: 1000), now: 1000)
        #expect(
            try store.claimArrived(message("held@host", at: 1000), now: 1003, claimer: other)
                == .claimed(message("held@host", at: 1000)))
        #expect(try store.claimArrived(message("held@host", at: 1000), now: 1004) == .claimedElsewhere)
        // Once shown, both say so.
        try store.markShown(callID: "twice@host", now: 1005)
        #expect(
            try store.claimArrived(message("twice@host", at: 1000), now: 1006, claimer: other) == .shown(.notification))
        #expect(try store.claim(callID: "twice@host", now: 1006, claimer: other) == .shown(.notification))
        // A claimer that died before showing it: the copy that arrives is this process's to show.
        #expect(try store.claimArrived(message("dead@host", at: 1000), now: 1007, claimer: Self.deadProcess) != .absent)
        #expect(
            try store.claimArrived(message("dead@host", at: 1000), now: 1008)
                == .claimed(message("dead@host", at: 1000)))
        #expect(try store.claim(callID: "dead@host", now: 1009, claimer: other) == .claimedElsewhere)
    }

    @Test func aClaimOlderThanItsLifetimeGoesBackEvenIfThePidRuns() throws {
        let store = try store().messages
        try store.keep(message("stuck@host", at: 1000), now: 1000)
        #expect(try store.take(callID: "stuck@host", now: 1000) != nil)
        try store.purge(now: 1000 + store.claimMilliseconds)
        #expect(try store.held(now: 1000 + store.claimMilliseconds).isEmpty)
        try store.purge(now: 1001 + store.claimMilliseconds)
        #expect(try store.held(now: 1001 + store.claimMilliseconds).map(\.callID) == ["stuck@host"])
    }

    @Test func aVersionOneStoreKeepsItsMessagesThroughTheMigration() throws {
        let directory = try TestSupport.temporaryDirectory()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // The schema nse's first SQLite store had.
        let v1 = try Database(
            path: directory + "/app-group.db",
            schema: [
                """
                CREATE TABLE messages (
                    call_id TEXT PRIMARY KEY NOT NULL, sender TEXT NOT NULL, recipient TEXT NOT NULL,
                    content_type TEXT NOT NULL, body BLOB NOT NULL, received_at INTEGER NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('held', 'shown')), shown_at INTEGER);
                CREATE INDEX messages_by_state ON messages (state, received_at);
                CREATE TABLE strikes (id INTEGER PRIMARY KEY AUTOINCREMENT, reason TEXT NOT NULL, at INTEGER NOT NULL);
                CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, entry TEXT NOT NULL);
                """
            ])
        try v1.write { tx throws(DatabaseError) in
            try tx.execute(
                "INSERT INTO messages VALUES ('held@host', 'sip:a@x', 'sip:b@x', 'text/plain', x'6869', ?, 'held', NULL)",
                [.integer(now)])
            try tx.execute(
                "INSERT INTO messages VALUES ('shown@host', '', '', '', x'', ?, 'shown', ?)",
                [.integer(now), .integer(now)])
        }
        let store = try AppGroupStore(containerDirectory: directory).messages
        #expect(try store.keep(message("shown@host", at: now), now: now) == .alreadyShown)
        #expect(try store.take(callID: "held@host", now: now)?.body == Array("hi".utf8))
    }

    @Test func concurrentTakersGetAMessageExactlyOnce() async throws {
        let directory = try TestSupport.temporaryDirectory()
        let first = try AppGroupStore(containerDirectory: directory).messages
        for index in 0..<20 { try first.keep(message("m\(index)@host", at: 1000), now: 1000) }
        // Separate connections, as separate extension processes have.
        let winners = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    guard let store = try? AppGroupStore(containerDirectory: directory).messages else { return -100 }
                    var count = 0
                    for index in 0..<20 where (try? store.take(callID: "m\(index)@host", now: 2000)) != nil {
                        count += 1
                    }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(winners == 20)
    }

    @Test func strikesAndCallLog() throws {
        let voip = try store().voip
        #expect(try voip.strikes() == 0)
        #expect(try voip.recordStrike(reason: "no report") == 1)
        #expect(try voip.recordStrike(reason: "no report") == 2)
        try voip.record(["outcome": "terminated"], at: 10)
        try voip.record(["outcome": "reported"], at: 20)
        #expect(try voip.callLog(limit: 1).map { $0["outcome"]?.stringValue } == ["reported"])
        #expect(try voip.callLog().map { $0["at"]?.intValue } == [10, 20])
        try voip.reset()
        #expect(try voip.strikes() == 0)
    }

    @Test func importsTheFilesOlderVersionsKept() throws {
        let directory = try TestSupport.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/store", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/voip", withIntermediateDirectories: true)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try TestSupport.write(
            #"{"call_id":"legacy@host","from":"sip:alice@example.org","to":"sip:bob@example.org","content_type":"text/plain","body":"aGk=","received_at":\#(now)}"#,
            to: directory + "/store/abc.json")
        try TestSupport.write("not json", to: directory + "/store/torn.json")
        try TestSupport.write(#"{"count":2,"last_reason":"late","at":1}"#, to: directory + "/voip/strikes.json")
        try TestSupport.write(
            "{\"outcome\":\"reported\",\"at\":5}\n{\"outcome\":\"terminated\",\"at\":6}\n",
            to: directory + "/voip/calls.jsonl")
        let store = try AppGroupStore(containerDirectory: directory)
        #expect(try store.messages.take(callID: "legacy@host")?.body == Array("hi".utf8))
        #expect(try store.voip.strikes() == 2)
        #expect(try store.voip.callLog().count == 2)
        // Imported once: the files are set aside, and opening again imports nothing twice.
        #expect(!FileManager.default.fileExists(atPath: directory + "/store"))
        #expect(FileManager.default.fileExists(atPath: directory + "/voip/strikes.json.imported"))
        let again = try AppGroupStore(containerDirectory: directory)
        #expect(try again.voip.strikes() == 2)
    }

    @Test func aCorruptFileIsAClearError() throws {
        let directory = try TestSupport.temporaryDirectory()
        try TestSupport.write(String(repeating: "this is not a database ", count: 300), to: directory + "/app-group.db")
        let error = try #require(throws: DeviceError.self) { try AppGroupStore(containerDirectory: directory) }
        #expect(error.code == .corrupt)
        #expect(error.description.contains("app-group.db") && error.description.contains("not a database"))
        #expect(!error.description.contains("\n"))
    }

    @Test func aFullDiskStoresNothingAndSaysSo() throws {
        guard let small = try SmallFileSystem.mount(kilobytes: 256) else {
            Issue.record("needs root to mount a small tmpfs: the full-disk check did not run")
            return
        }
        defer { withExtendedLifetime(small) {} }  // mounted until the end of the test
        let store = try AppGroupStore(containerDirectory: small.path)
        try store.messages.keep(message("before@host", at: 1000), now: 1000)
        let filler = small.fill()
        let big = String(repeating: "x", count: 64 * 1024)
        var failure: DeviceError?
        for index in 0..<64 {
            do { try store.messages.keep(message("m\(index)@host", at: 1000, body: big), now: 1000) } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure, "a full disk must make keep throw")
        #expect(error.code == .io)
        #expect(!error.description.contains(big.prefix(16)))
        // What was committed before is intact, and the store works again once there is room.
        try FileManager.default.removeItem(atPath: filler)
        #expect(try store.messages.take(callID: "before@host", now: 2000) != nil)
        #expect(try store.messages.keep(message("after@host", at: 1000), now: 1000) == .kept)
    }
}

/// The store an extension process keeps open between pushes (`Device.cachedAppGroup()`).
@Suite struct KeptAppGroupStoreTests {
    @Test func oneConnectionServesEveryPushAndAReplacedFileIsOpenedAnew() throws {
        let root = try TestSupport.temporaryDirectory()
        let path = root + "/device"
        let device = try Device.create(at: path)
        let first = try device.cachedAppGroup()
        #expect(try device.cachedAppGroup() === first)
        try first.messages.keep(
            StoredMessage(
                callID: "kept@host", from: "sip:alice@example.org", to: "sip:bob@example.org",
                contentType: "text/plain", body: Array("hello".utf8), receivedAt: 1000), now: 1000)
        // Another process (the host, another extension) sees what the kept connection wrote.
        #expect(try AppGroupStore(containerDirectory: path).messages.contains(callID: "kept@host", now: 1001))

        // The device is made again at the same place: its new database is opened, not the removed one written to.
        try FileManager.default.removeItem(atPath: path)
        let again = try Device.create(at: path)
        let second = try again.cachedAppGroup()
        #expect(second !== first)
        #expect(try !second.messages.contains(callID: "kept@host", now: 1001))
        try second.messages.markShown(callID: "new@host", now: 1002)
        #expect(try AppGroupStore(containerDirectory: path).messages.shownBy(callID: "new@host", now: 1003) != nil)
    }
}
