import Dispatch
import Foundation
import Logging
import NSEDatabase
import NSEDevice
import NSEJSON
import NSEPayload
import NSETestSupport
import Synchronization
import Testing

@testable import NSEAPNsServer

/// A `--devices` folder's results in one database (`FOLDER/.nse-results.db`), each device's rows numbered as in a
/// file of its own; a device's own `results.db` imported into its folder's, and its rows moved back to its own when
/// it is served alone.
@Suite struct FolderResultsTests {
    let folder: String
    let devices: [Device]

    init() throws {
        let root = try TestSupport.temporaryDirectory("nse-folder-results")
        let directories = try DeviceFolder.create(in: root + "/fleet", count: 8, options: Device.Options(), workers: 2)
        devices = try directories.map { try Device.open(at: $0) }
        folder = (devices[0].directory as NSString).deletingLastPathComponent
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "nse.serve.test")
        logger.logLevel = .critical
        return logger
    }

    func folderStore() -> ResultStore {
        let store = ResultStore(logger: Self.quietLogger)
        store.serve(folders: [folder])
        return store
    }

    func accept(_ apnsID: String, for device: Device, in store: ResultStore) throws -> ResultStore.Row {
        let push = AcceptedPush(
            apnsID: apnsID, token: device.config.remoteToken, tokenKind: .remote, pushType: .alert, priority: 10,
            payload: Array(#"{"aps":{"alert":"x","mutable-content":1}}"#.utf8))
        return try store.accept(AcceptedPushRecord(push: push, uniqueID: "u-" + apnsID, receivedAt: 1), for: device)
    }

    func ownDatabase(_ device: Device) -> String { device.directory + "/notifications/results.db" }

    @Test func aFoldersDevicesShareOneDatabaseEachNumberedAsIfAlone() throws {
        let store = folderStore()
        let a1 = try accept("a1", for: devices[0], in: store)
        let b1 = try accept("b1", for: devices[1], in: store)
        let a2 = try accept("a2", for: devices[0], in: store)
        #expect([a1.id, a2.id, b1.id] == [1, 2, 1])
        for (row, device) in [(a1, devices[0]), (a2, devices[0]), (b1, devices[1])] {
            try store.complete(row, result: ["outcome": "original"], for: device)
        }
        #expect(try store.results(for: devices[0], limit: 10).compactMap { $0["id"]?.intValue } == [2, 1])
        #expect(try store.results(for: devices[0], limit: 10, since: 1).compactMap { $0["id"]?.intValue } == [2])
        #expect(try store.results(for: devices[1], limit: 10).compactMap { $0["id"]?.intValue } == [1])
        #expect(try store.results(for: devices[2], limit: 10).isEmpty)
        #expect(FileManager.default.fileExists(atPath: ResultStore.folderPath(folder)))
        for device in devices { #expect(!FileManager.default.fileExists(atPath: ownDatabase(device))) }
        // A withdrawn push's number is not seen by anyone; the next push of the device follows the last kept.
        let a3 = try accept("a3", for: devices[0], in: store)
        try store.withdraw(a3, for: devices[0])
        #expect(try accept("a4", for: devices[0], in: store).id == 3)
    }

    /// Pushes of different devices accepted at the same time share a transaction and its sync: the point of one
    /// database for a folder (with one file each, every push paid a sync of its own).
    @Test func pushesOfDifferentDevicesAcceptedAtOnceShareSyncs() throws {
        let store = folderStore()
        let perRound = 25
        let rounds = 4
        // Commits in all the databases the pushes went to (one device's pushes come one after another: with a file
        // per device, none would share).
        var databases: [String: Device] = [:]
        for device in devices { databases[store.home(for: device).path] = device }
        #expect(databases.count == 1)
        func commits() throws -> Int {
            try databases.values.reduce(0) { $0 + (try store.batchedWrites(for: $1).batches) }
        }
        // A thread each (as the server's store threads), let go together: a batch forms while another commits. A
        // loaded machine may still run them one after another for a round: a few rounds, until one shares.
        var perDevice = 0
        for round in 0..<rounds {
            let before = try commits()
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (index, device) in devices.enumerated() {
                group.enter()
                let thread = Thread {
                    start.wait()
                    for number in 0..<perRound {
                        _ = try? accept("p\(index)-\(round)-\(number)", for: device, in: store)
                    }
                    group.leave()
                }
                thread.start()
            }
            for _ in devices { start.signal() }
            #expect(group.wait(timeout: .now() + 120) == .success)
            perDevice += perRound
            if try commits() - before < devices.count * perRound { break }
        }
        var accepted = 0
        for device in devices {
            let rows = try Database(path: ResultStore.folderPath(folder), schema: ResultStore.schema).execute(
                "SELECT seq FROM results WHERE device = ? ORDER BY seq",
                [.text((device.directory as NSString).lastPathComponent)])
            #expect(rows.compactMap { $0.integer(0) } == Array(1...Int64(perDevice)))
            accepted += rows.count
        }
        #expect(accepted == devices.count * perDevice)
        let batches = try commits()
        #expect(batches < accepted, "\(batches) commits for \(accepted) pushes")
    }

    /// A device's own results.db (served alone before, or by an nse before folders had one) goes into its folder's
    /// database when the folder is served: rows and numbers kept, a push left unrun still unrun, the file renamed.
    @Test func aDevicesOwnDatabaseIsImportedIntoItsFolders() throws {
        let alone = ResultStore(logger: Self.quietLogger)
        let device = devices[3]
        let first = try accept("own-1", for: device, in: alone)
        try alone.complete(first, result: ["outcome": "original", "apns_id": "own-1"], for: device)
        let second = try accept("own-2", for: device, in: alone)
        try alone.complete(second, result: ["outcome": "original", "apns_id": "own-2"], for: device)
        let unrun = try accept("own-3", for: device, in: alone)
        #expect(FileManager.default.fileExists(atPath: ownDatabase(device)))
        alone.close(directories: [device.directory])

        let store = folderStore()
        #expect(store.mayHaveRows(directory: device.directory))
        let (found, failed) = store.unfinished(for: devices)
        #expect(failed.isEmpty)
        #expect(found.map(\.row) == [unrun] && found.first?.device.directory == device.directory)
        #expect(found.first?.record.push.apnsID == "own-3")
        #expect(
            try store.results(for: device, limit: 10).compactMap { $0["apns_id"]?.stringValue } == ["own-2", "own-1"])
        #expect(!FileManager.default.fileExists(atPath: ownDatabase(device)))
        #expect(FileManager.default.fileExists(atPath: ownDatabase(device) + ".imported"))
        #expect(try accept("next", for: device, in: store).id == unrun.id + 1)

        // An import that committed but was not renamed (the server died in between) adds nothing the second time.
        store.close(directories: [device.directory])
        try FileManager.default.moveItem(atPath: ownDatabase(device) + ".imported", toPath: ownDatabase(device))
        if FileManager.default.fileExists(atPath: ownDatabase(device) + ".imported-wal") {
            try FileManager.default.moveItem(
                atPath: ownDatabase(device) + ".imported-wal", toPath: ownDatabase(device) + "-wal")
        }
        let again = folderStore()
        #expect(try again.results(for: device, limit: 10).count == 2)
        #expect(try again.unfinished(for: device).count == 2)
    }

    /// The first pushes to a folder's devices, all at once on a server that has not opened its database yet: one of
    /// them opens it and imports the devices' own files, the others wait for it; none fails, nothing is imported twice.
    @Test func theFirstPushesOfAFolderAtOnceImportItsDevicesFilesOnce() throws {
        let alone = ResultStore(logger: Self.quietLogger)
        for device in devices {
            let row = try accept("own", for: device, in: alone)
            try alone.complete(row, result: ["outcome": "original", "apns_id": "own"], for: device)
        }
        alone.close(directories: devices.map(\.directory))
        let store = folderStore()
        let failures = Mutex(0)
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for device in devices {
            group.enter()
            Thread {
                start.wait()
                do { _ = try accept("first", for: device, in: store) } catch { failures.withLock { $0 += 1 } }
                group.leave()
            }.start()
        }
        for _ in devices { start.signal() }
        #expect(group.wait(timeout: .now() + 120) == .success)
        #expect(failures.withLock { $0 } == 0)
        for device in devices {
            #expect(try store.results(for: device, limit: 10).compactMap { $0["apns_id"]?.stringValue } == ["own"])
            #expect(try store.unfinished(for: device).map(\.0.id) == [2])
            #expect(!FileManager.default.fileExists(atPath: ownDatabase(device)))
        }
    }

    /// A folder's device served alone afterwards (`--device`) takes its rows from the folder's database into its own:
    /// its history reads on with the same numbers and a push the folder's server left unrun runs there.
    @Test func aDeviceServedAloneTakesItsRowsFromItsFolder() throws {
        let store = folderStore()
        let device = devices[5]
        let done = try accept("f-1", for: device, in: store)
        try store.complete(done, result: ["outcome": "original", "apns_id": "f-1"], for: device)
        let unrun = try accept("f-2", for: device, in: store)
        let other = try accept("o-1", for: devices[6], in: store)
        store.close(directories: [device.directory])

        let alone = ResultStore(logger: Self.quietLogger)
        #expect(try alone.results(for: device, limit: 10).compactMap { $0["id"]?.intValue } == [done.id])
        #expect(try alone.unfinished(for: device).map(\.0) == [unrun])
        #expect(try accept("a-1", for: device, in: alone).id == unrun.id + 1)
        // Gone from the folder's database; the other device's rows stay there.
        let left = try Database(path: ResultStore.folderPath(folder), schema: ResultStore.schema).execute(
            "SELECT device, seq FROM results ORDER BY device, seq")
        #expect(left.compactMap { $0.text(0) } == [(devices[6].directory as NSString).lastPathComponent])
        #expect(left.compactMap { $0.integer(1) } == [other.id])
    }

    /// A device's database from before version 4 keeps its row ids as the rows' numbers.
    @Test func anOlderDatabaseKeepsItsIds() throws {
        let device = devices[7]
        try FileManager.default.createDirectory(
            atPath: device.directory + "/notifications", withIntermediateDirectories: true)
        let old = try Database(path: ownDatabase(device), schema: Array(ResultStore.schema.prefix(3)))
        for id in [1, 2, 5] {
            try old.execute(
                "INSERT INTO results (id, apns_id, token, received_at, recorded_at, result) VALUES (?, ?, 't', 1, 1, ?)",
                [.integer(Int64(id)), .text("old-\(id)"), .text(#"{"outcome":"original"}"#)])
        }
        let store = ResultStore(logger: Self.quietLogger)
        #expect(try store.results(for: device, limit: 10).compactMap { $0["id"]?.intValue } == [5, 2, 1])
        #expect(try accept("new", for: device, in: store).id == 6)
    }
}
