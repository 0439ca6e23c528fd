import Foundation
import Logging
import NSEDatabase
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSEProtocol
import NSETestSupport
import Synchronization
import Testing

@testable import NSEAPNsServer

#if canImport(Glibc)
    import Glibc
#endif

/// Memory that stays flat under a long soak (issue #10): a GET of any size is read and sent a page at a time, and a
/// kept-alive connection carries one close watch however many pushes it brings.
@Suite(.serialized) struct ResultPagingTests {
    let served: ServedDevice
    var root: String { served.root }
    var device: Device { served.device }
    var token: String { served.token }
    static var quietLogger: Logger { ServedDevice.quietLogger }

    init() throws { served = try ServedDevice("nse-serve-paging") }

    /// `count` results recorded as a server records them: accepted, then completed (with text that needs escaping).
    func record(_ count: Int, in store: ResultStore) throws {
        for index in 0..<count {
            let row = try store.accept(
                AcceptedPushRecord(
                    push: AcceptedPush(
                        apnsID: "id-\(index)", token: token, tokenKind: .remote, pushType: .alert, priority: 10,
                        payload: Array(#"{"aps":{"alert":"x"}}"#.utf8)),
                    uniqueID: "u-\(index)", receivedAt: Int64(index)), for: device)
            try store.complete(
                row,
                result: [
                    "outcome": "rewritten", "apns_id": .string("id-\(index)"), "recorded_at": .int(Int64(index)),
                    "title": "quote \" and \u{1} and é",
                ], for: device)
        }
    }

    func get(_ url: String) async throws -> (status: String, body: String) {
        let output = try await runOffPool(
            "/usr/bin/curl", ["-sS", "--max-time", "30", "-w", "\n%{http_code}", url], timeout: 40
        ).stdout
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    @Test func aLongAnswerIsStreamedByPagesAndIsTheSameDocument() async throws {
        let pages = ResultStore.pageRows
        let total = 2 * pages + 37
        try record(total, in: ResultStore(logger: Self.quietLogger))
        let server = try await InProcessServer(PushServerConfiguration(host: "127.0.0.1", port: 0), device: device)
        let base = server.url + "/v1/devices/\(token)/notifications"
        let expectedAll = try ResultStore(logger: Self.quietLogger).results(for: device, limit: 100_000)
        #expect(expectedAll.count == total)

        // Everything, over three pages: byte for byte the one-piece serialization, newest first.
        let all = try await get(base + "?limit=100000")
        #expect(all.status == "200")
        #expect(all.body == JSON.array(expectedAll).serialized())
        // A limit that ends inside the second page, and one that is exactly one page.
        let partial = try await get(base + "?limit=\(pages + 5)")
        #expect(partial.body == JSON.array(Array(expectedAll.prefix(pages + 5))).serialized())
        let onePage = try await get(base + "?limit=\(pages)")
        #expect(onePage.body == JSON.array(Array(expectedAll.prefix(pages))).serialized())
        // `since` still bounds every page: only rows after it, newest first.
        let sinceID = try #require(expectedAll[pages + 10]["id"]?.intValue)
        let since = try await get(base + "?limit=100000&since=\(sinceID)")
        let parsed = try JSON.parse(since.body, options: JSONParseOptions(requireObject: false)).arrayValue ?? []
        #expect(parsed.count == pages + 10)
        #expect(parsed.first == expectedAll.first && parsed.last == expectedAll[pages + 9])
        await server.stop()
    }

    /// Only pushes a previous run left unrun are run again, once: never a push this run accepted (the resumption
    /// used to read the store while new pushes were being accepted, and ran some of them twice).
    @Test func onlyAPreviousRunsUnfinishedPushesRunAgainAndOnce() async throws {
        let store = ResultStore(logger: Self.quietLogger)
        _ = try store.accept(
            AcceptedPushRecord(
                push: AcceptedPush(
                    apnsID: "00000000-0000-4000-8000-0000000000aa", token: token, tokenKind: .remote, pushType: .alert,
                    priority: 10, payload: Array(#"{"aps":{"alert":"before","mutable-content":1}}"#.utf8)),
                uniqueID: "u-before", receivedAt: 1), for: device)
        // An extension that counts its runs.
        let runs = root + "/runs"
        let counting = try served.slowExtension("counting-extension.sh", before: "echo run >> '\(runs)'\nsleep 1")
        let server = try await InProcessServer(
            PushServerConfiguration(host: "127.0.0.1", port: 0), device: device, extensionCommand: [counting])
        let answer = try await served.push(to: server.url, apnsID: "00000000-0000-4000-8000-0000000000bb")
        #expect(answer == "200")
        // Asked again while both pushes run (each takes a second, their rows still without a result): nothing is
        // left to rerun.
        #expect(server.service.resumeUnfinished() == 0)
        var recorded: [JSON] = []
        for _ in 0..<100 where recorded.count < 2 {
            try await Task.sleep(nanoseconds: 50_000_000)
            recorded = try store.results(for: device, limit: 10)
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        await server.stop()
        recorded = try store.results(for: device, limit: 10)
        let byID = Dictionary(recorded.map { ($0["apns_id"]?.stringValue ?? "", $0) }, uniquingKeysWith: { $1 })
        #expect(recorded.count == 2)
        #expect(byID["00000000-0000-4000-8000-0000000000aa"]?["redelivered"]?.boolValue == true)
        #expect(byID["00000000-0000-4000-8000-0000000000bb"]?["redelivered"] == nil)
        let ranTimes = (try? String(contentsOfFile: runs, encoding: .utf8))?.split(separator: "\n").count
        #expect(ranTimes == 2)
    }

    /// A server that kept an extension's content (and so let the extension give up its messages) and stopped before
    /// the result judges the push on that content when it starts again, without running an extension that would find
    /// its messages gone; a push that runs keeps its content until its result is in, then lets it go.
    @Test func aPushWhoseContentWasKeptIsJudgedOnItAfterARestart() async throws {
        let store = ResultStore(logger: Self.quietLogger)
        let apnsID = "00000000-0000-4000-8000-0000000000cc"
        let row = try store.accept(
            AcceptedPushRecord(
                push: AcceptedPush(
                    apnsID: apnsID, token: token, tokenKind: .remote, pushType: .alert, priority: 10,
                    payload: Array(#"{"aps":{"alert":"you have a message","mutable-content":1}}"#.utf8)),
                uniqueID: "u-kept", receivedAt: 1), for: device)
        let kept = try ExtensionHandover(
            json: [
                "content": [
                    "type": "content", "content": ["aps": ["alert": ["title": "Alice", "body": "see you at 8"]]],
                    "reason": "decrypted: kept", "info": ["source": "sip"],
                ]
            ])
        try store.keep(kept, of: row, for: device)
        #expect(try store.unfinished(for: device).first?.1.handover == kept)
        // And a call offer the host had accepted: the app is launched with it when the push is judged again.
        let callID = "00000000-0000-4000-8000-0000000000ce"
        let callRow = try store.accept(
            AcceptedPushRecord(
                push: AcceptedPush(
                    apnsID: callID, token: token, tokenKind: .remote, pushType: .alert, priority: 10,
                    payload: Array(#"{"aps":{"alert":"incoming call","mutable-content":1}}"#.utf8)),
                uniqueID: "u-call", receivedAt: 2), for: device)
        var call = kept
        call.content = DeliveredContent(content: [:], reason: "voip-escalated: kept")
        call.voipReported = true
        call.acceptedVoIPPayload = ["from": "sip:alice@example.org", "display_name": "Alice", "source": "sip"]
        try store.keep(call, of: callRow, for: device)

        let runs = root + "/kept-runs"
        let counting = try served.slowExtension("kept-extension.sh", before: "echo run >> '\(runs)'")
        let server = try await InProcessServer(
            PushServerConfiguration(host: "127.0.0.1", port: 0), device: device, extensionCommand: [counting])
        var recorded: [JSON] = []
        for _ in 0..<100 where recorded.count < 2 {
            try await Task.sleep(nanoseconds: 50_000_000)
            recorded = try store.results(for: device, limit: 10)
        }
        let resumedCall = try #require(recorded.first)
        #expect(resumedCall["apns_id"] == .string(callID))
        #expect(resumedCall["call_report"]?["remote_handle"]?["value"] == "sip:alice@example.org")
        #expect(resumedCall["voip"] != nil)
        let resumed = try #require(recorded.dropFirst().first)
        #expect(resumed["apns_id"] == .string(apnsID))
        #expect(resumed["redelivered"] == true)
        #expect(resumed["outcome"] == "rewritten")
        #expect(resumed["display"]?["body"] == "see you at 8")
        #expect(resumed["reason"] == "decrypted: kept")
        #expect(!FileManager.default.fileExists(atPath: runs), "the extension ran again")

        // A push of this run: its extension runs, its content is kept while it does, and let go with the result.
        #expect(try await served.push(to: server.url, apnsID: "00000000-0000-4000-8000-0000000000dd") == "200")
        for _ in 0..<100 where recorded.count < 3 {
            try await Task.sleep(nanoseconds: 50_000_000)
            recorded = try store.results(for: device, limit: 10)
        }
        await server.stop()
        #expect(recorded.first?["display"]?["body"] == "done")
        #expect(try store.unfinished(for: device).isEmpty)
        let database = try Database(path: ResultStore.path(ofDevice: device.directory), schema: ResultStore.schema)
        #expect(try database.execute("SELECT count(*) FROM results WHERE delivered IS NOT NULL").first?.integer(0) == 0)
    }

    @Test func aConnectionCarryingManyPushesIsWatchedOnceAndItsUnansweredPushesMarkedOnClose() throws {
        let markedRows = Mutex<[Int64]>([])
        var marked: [Int64] { markedRows.withLock { $0 } }
        let acknowledgements = Acknowledgements { row, _ in markedRows.withLock { $0.append(row.id) } }
        final class Connection {}
        let connection = Connection()
        let other = Connection()
        let id = ObjectIdentifier(connection)
        // 1,000 pushes on one kept-alive connection: only the first asks for a close watch.
        var watches = 0
        for index in 0..<1000 {
            acknowledgements.expect("u\(index)", row: ResultStore.Row(id: Int64(index)), device: device)
            if acknowledgements.watch("u\(index)", on: id) { watches += 1 }
            if index < 998 { acknowledgements.answered("u\(index)", written: true) }
        }
        #expect(watches == 1)
        #expect(acknowledgements.watchedChannels == 1)
        // Another connection's push, whose answer is being written when the first connection closes.
        acknowledgements.expect("x", row: ResultStore.Row(id: 5000), device: device)
        #expect(acknowledgements.watch("x", on: ObjectIdentifier(other)))
        acknowledgements.writing("u998")
        // The connection closes: its push whose answer never started is not acknowledged; the one being written is
        // left to its writer, and the other connection's push is untouched.
        acknowledgements.channelClosed(id)
        #expect(marked == [999])
        #expect(acknowledgements.watchedChannels == 1)
        #expect(acknowledgements.count == 2)
        acknowledgements.answered("u998", written: false)
        #expect(marked == [999, 998])
        withExtendedLifetime((connection, other)) {}
    }
}
