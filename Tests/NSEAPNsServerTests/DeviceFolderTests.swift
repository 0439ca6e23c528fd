import Foundation
import Logging
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem
import NSETestSupport
import Testing

/// Many devices in one server (`nse device init-many`, `nse serve --devices`): indexed by token at start, opened on
/// their first push, their folder's database opened on the first of them, and devices' own databases opened only when
/// used and no more than `maxOpen` at once.
@Suite struct DeviceFolderTests {
    @Test func initManyMakesAFolderThatServeServesLazily() async throws {
        let root = try TestSupport.temporaryDirectory("nse-fleet")
        let made = try TestSupport.nse(["device", "init-many", root + "/fleet", "--count", "40", "--filtering"])
        #expect(made.status == 0, "\(made.stderr)")
        let line = try JSON.parse(made.stdout)
        #expect(line["created"]?.intValue == 40)
        #expect(line["first"]?.stringValue?.hasSuffix("/device-00001") == true)
        #expect(try TestSupport.nse(["device", "init-many", root + "/none", "--count", "0"]).status == 64)
        // A device whose device.json is broken is left out with a warning; the others are served.
        try TestSupport.write("{not json", to: root + "/fleet/device-00040/device.json")
        let (entries, problems) = try DeviceFolder.scan(root + "/fleet")
        #expect(entries.count == 39 && problems.count == 1)
        #expect(problems.first?.contains("device-00040") == true)

        let server = try ServeProcess(["--listen", "127.0.0.1:0", "--devices", root + "/fleet"])
        defer { server.stop() }
        let pid = server.process.processIdentifier
        let descriptorsAtStart = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        var pushed: [String] = []
        for entry in [entries[0], entries[17], entries[38]] {
            let answer = try await runOffPool(
                "/usr/bin/curl",
                [
                    "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30",
                    "-H", "apns-topic: org.example.app", "--data-binary",
                    #"{"aps":{"alert":"hello","mutable-content":1}}"#, server.url + "/3/device/" + entry.remoteToken,
                ], timeout: 40)
            #expect(answer.stdout == "200", "\(answer.stderr)")
            pushed.append(entry.directory)
        }
        let listed = try await runOffPool("/usr/bin/curl", ["-sS", server.url + "/v1/devices"], timeout: 20)
        #expect(try JSON.parse(listed.stdout, options: JSONParseOptions(requireObject: false)).arrayValue?.count == 39)
        #expect(server.stop() == 0)
        // One database for the folder's devices; none of their own.
        #expect(FileManager.default.fileExists(atPath: root + "/fleet/.nse-results.db"))
        for entry in entries {
            #expect(!FileManager.default.fileExists(atPath: entry.directory + "/notifications/results.db"))
        }
        for entry in entries {
            #expect(try recordedResults(entry.directory).count == (pushed.contains(entry.directory) ? 1 : 0))
        }
        // Forty devices cost no descriptor at start: no database was opened before its first push.
        #expect(descriptorsAtStart < 40, "\(descriptorsAtStart) descriptors at start")
    }

    @Test func theStoreKeepsAtMostMaxOpenDatabasesAndReopensTheOthers() async throws {
        let root = try TestSupport.temporaryDirectory("nse-fleet-store")
        let directories = try DeviceFolder.create(in: root, count: 3, options: Device.Options(), workers: 2)
        let devices = try directories.map { try Device.open(at: $0) }
        let store = ResultStore(logger: Logger(label: "test"), maxOpen: 2)
        var rows: [(ResultStore.Row, Device)] = []
        for device in devices {
            let push = AcceptedPush(
                apnsID: PushService.newAPNsID(), token: device.config.remoteToken, tokenKind: .remote,
                pushType: .alert, priority: 10, payload: Array(#"{"aps":{"alert":"x"}}"#.utf8))
            let record = AcceptedPushRecord(push: push, uniqueID: PushService.newAPNsID(), receivedAt: 1)
            rows.append((try store.accept(record, for: device), device))
        }
        #expect(store.openCount == 2)
        for (row, device) in rows {
            try store.complete(row, result: ["outcome": "original"], for: device)
            #expect(try store.results(for: device, limit: 10, since: 0).count == 1)
        }
        #expect(store.openCount == 2)
    }

    /// The databases kept open fit the descriptor limit, a quarter of it (at least 256) left to the rest; the
    /// server raises its soft limit, never above the hard one, and never lowers it.
    @Test func openDatabasesFitTheDescriptorLimit() {
        #expect(ResultStore.maxOpen(fitting: 1024) == 256)
        #expect(ResultStore.maxOpen(fitting: 4096) == 1024)
        #expect(ResultStore.maxOpen(fitting: 300) == 16)
        #expect(ResultStore.defaultMaxOpen <= ResultStore.maxOpen(fitting: ResultStore.defaultMaxOpen * 4 + 4096))
        let before = Processes.raiseDescriptorLimit(to: 0)
        #expect(before > 0)
        #expect(Processes.raiseDescriptorLimit(to: before + 1) >= before)
        #expect(Processes.raiseDescriptorLimit(to: 0) >= before)
    }
}
