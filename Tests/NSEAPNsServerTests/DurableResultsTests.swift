import Foundation
import Logging
import NIOCore
import NIOHPACK
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Results in SQLite (issue #10, defects 5, 6, 7): O(limit) reads, the old JSON lines imported, no 200 for a push
/// that is not on disk, and HTTP/2 streams over the limit refused one by one.
@Suite(.serialized) struct DurableResultsTests {
    let served: ServedDevice
    var root: String { served.root }
    var device: Device { served.device }
    var token: String { served.token }
    static var quietLogger: Logger { ServedDevice.quietLogger }

    init() throws { served = try ServedDevice("nse-serve-durable") }

    @Test func fiftyThousandImportedResultsAndTheNewestTenComeBackInOrder() throws {
        // 50,000 lines as nse wrote them before SQLite, and a torn last line (a full disk mid-append).
        var text = ""
        for index in 0..<50_000 {
            text +=
                #"{"outcome":"rewritten","apns_id":"id-\#(index)","token":"\#(token)","received_at":\#(index),"recorded_at":\#(index)}"#
                + "\n"
        }
        text += #"{"outcome":"rewri"#
        try FileManager.default.createDirectory(atPath: root + "/bob/notifications", withIntermediateDirectories: true)
        try TestSupport.write(text, to: root + "/bob/notifications/results.jsonl")

        let store = ResultStore(logger: Self.quietLogger)
        let newest = try store.results(for: device, limit: 10)
        #expect(newest.compactMap { $0["apns_id"]?.stringValue } == (49_990..<50_000).reversed().map { "id-\($0)" })
        #expect(newest.allSatisfy { $0["acknowledged"]?.boolValue == true })
        #expect(FileManager.default.fileExists(atPath: root + "/bob/notifications/results.jsonl.imported"))
        #expect(!FileManager.default.fileExists(atPath: root + "/bob/notifications/results.jsonl"))
        // `since` pages by row id; a new store (a restarted server) sees the same rows and imports nothing twice.
        let lastID = try #require(newest.first?["id"]?.intValue)
        #expect(try store.results(for: device, limit: 10, since: lastID).isEmpty)
        let older = try ResultStore(logger: Self.quietLogger).results(for: device, limit: 3, since: lastID - 3)
        #expect(older.compactMap { $0["apns_id"]?.stringValue } == ["id-49999", "id-49998", "id-49997"])
        #expect(try ResultStore(logger: Self.quietLogger).results(for: device, limit: 100_000).count == 50_000)
    }

    /// A full disk (a small tmpfs, as root) or, failing that, a read-only results.db: the push is answered 500 and
    /// never 200, and the next push once there is room is recorded.
    @Test func aPushThatCannotBeRecordedIsNotAnswered200AndTheNextOneIs() async throws {
        let notifications = root + "/bob/notifications"
        try FileManager.default.createDirectory(atPath: notifications, withIntermediateDirectories: true)
        let small = try SmallFileSystem.mount(kilobytes: 256, at: notifications)
        defer { withExtendedLifetime(small) {} }  // mounted until the end of the test
        let mounted = small != nil
        if !mounted && getuid() == 0 {
            // Root without mount: a read-only file would not stop root, so neither way can run the check.
            Issue.record("root could not mount a small tmpfs: the full-disk check did not run")
            return
        }

        let server = try await InProcessServer(PushServerConfiguration(host: "127.0.0.1", port: 0), device: device)
        func push() async throws -> String {
            try await runOffPool(
                "/usr/bin/curl",
                [
                    "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30", "-H",
                    "apns-topic: org.example.app",
                    "--data-binary", #"{"aps":{"alert":"hello"}}"#, server.url + "/3/device/" + token,
                ], timeout: 40
            ).stdout
        }
        #expect(try await push() == "200")
        // Fill the disk to the last byte (or, not root, make the database read-only).
        let filler = small?.fill()
        if !mounted { chmod(notifications + "/results.db", 0o400) }
        // Several pushes: each is refused (500), none answered 200.
        var refused: [String] = []
        for _ in 0..<3 { refused.append(try await push()) }
        #expect(refused.allSatisfy { $0 == "500" }, "\(refused)")
        if let filler {
            try FileManager.default.removeItem(atPath: filler)
        } else {
            chmod(notifications + "/results.db", 0o600)
        }
        #expect(try await push() == "200")
        await server.stop()
        let recorded = try server.service.store.results(for: device, limit: 10)
        #expect(recorded.count == 2)
    }

    /// The disk fills while an accepted push runs (the soak's full-disk fault): its result waits for room instead of
    /// being dropped, and is recorded once the space is back. A push answered 200 is never left without its result.
    @Test func aResultThatMeetsAFullDiskIsRecordedOnceThereIsRoom() async throws {
        let notifications = root + "/bob/notifications"
        try FileManager.default.createDirectory(atPath: notifications, withIntermediateDirectories: true)
        guard let small = try SmallFileSystem.mount(kilobytes: 256, at: notifications) else {
            Issue.record("needs root to mount a small tmpfs: the full-disk check did not run")
            return
        }
        defer { withExtendedLifetime(small) {} }  // mounted until the end of the test
        // An extension that takes a second, so the disk is full by the time its result is written.
        let slow = try served.slowExtension("slow-extension.sh", before: "sleep 1")
        let server = try await InProcessServer(
            PushServerConfiguration(host: "127.0.0.1", port: 0), device: device, extensionCommand: [slow])
        let answer = try await served.push(to: server.url, apnsID: "0a1b2c3d-0000-4000-8000-000000000001")
        #expect(answer == "200")
        let filler = small.fill()
        // The result is due at about 1 s: the disk stays full until 2.5 s, then the space comes back.
        try await Task.sleep(nanoseconds: 2_500_000_000)
        #expect(try server.service.store.results(for: device, limit: 10).isEmpty)
        try FileManager.default.removeItem(atPath: filler)
        var recorded: [JSON] = []
        for _ in 0..<50 where recorded.isEmpty {
            try await Task.sleep(nanoseconds: 100_000_000)
            recorded = try server.service.store.results(for: device, limit: 10)
        }
        await server.stop()
        #expect(recorded.count == 1)
        #expect(recorded.first?["apns_id"]?.stringValue == "0a1b2c3d-0000-4000-8000-000000000001")
        #expect(recorded.first?["outcome"]?.stringValue == "rewritten")
    }

    /// The server's first SETTINGS frame says APNs's 1000 unless `--max-concurrent-streams` says otherwise.
    @Test(arguments: [nil, 1, 250, 10_000])
    func theAdvertisedStreamLimitIsAPNssUnlessConfigured(configured: Int?) async throws {
        var configuration = PushServerConfiguration(host: "127.0.0.1", port: 0)
        if let configured { configuration.streams = StreamSettings(maxConcurrentStreams: configured) }
        let server = try await InProcessServer(configuration, device: device)
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        connection.send(H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes)
        var reader = H2FrameReader()
        var advertised: UInt32?
        let deadline = Date().addingTimeInterval(10)
        while advertised == nil, Date() < deadline, let bytes = connection.read(timeout: 2) {
            for frame in reader.feed(bytes) where frame.type == H2Frame.settings && frame.flags & H2Frame.ack == 0 {
                for offset in stride(from: 0, to: frame.payload.count, by: 6)
                where frame.payload[offset] == 0 && frame.payload[offset + 1] == 3 {
                    advertised = frame.word(at: offset + 2)
                }
            }
        }
        await server.stop()
        #expect(advertised == UInt32(configured ?? 1000))
    }

    /// One connection opens 1,000 streams at once against a configured SETTINGS_MAX_CONCURRENT_STREAMS of 100 (the
    /// default, 1000, would admit them all): the excess get RST_STREAM(REFUSED_STREAM), the rest 200, no GOAWAY,
    /// and exactly the 200s are recorded.
    @Test func streamsOverTheLimitAreRefusedAndTheRestAnswered() async throws {
        let server = try await InProcessServer(
            PushServerConfiguration(
                host: "127.0.0.1", port: 0, streams: StreamSettings(maxConcurrentStreams: 100)),
            device: device, concurrency: 4, queue: 2000)
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let body = Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        var burst = H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
        let streams = (0..<1000).map { UInt32(2 * $0 + 1) }
        for stream in streams {
            burst += try H2Frame.post(
                stream: stream, path: "/3/device/\(token)", headers: [("apns-topic", "org.example.app")], body: body,
                encoder: &encoder)
        }
        connection.send(burst)

        var reader = H2FrameReader()
        var ok: [UInt32: String] = [:]
        var refused = Set<UInt32>()
        var other: [String] = []
        var advertised: UInt32?
        let deadline = Date().addingTimeInterval(60)
        while ok.count + refused.count + other.count < streams.count, Date() < deadline {
            guard let bytes = connection.read(timeout: 5) else { break }
            for frame in reader.feed(bytes) {
                switch frame.type {
                case H2Frame.settings where frame.flags & H2Frame.ack == 0:
                    connection.send(H2Frame(type: H2Frame.settings, flags: H2Frame.ack, stream: 0, payload: []).bytes)
                    for offset in stride(from: 0, to: frame.payload.count, by: 6)
                    where frame.payload[offset] == 0 && frame.payload[offset + 1] == 3 {
                        advertised = frame.word(at: offset + 2)
                    }
                case H2Frame.headers:
                    var block = ByteBuffer(bytes: frame.payload)
                    let headers = try decoder.decodeHeaders(from: &block)
                    if headers.first(name: ":status") == "200" {
                        ok[frame.stream] = headers.first(name: "apns-id") ?? ""
                    } else {
                        other.append(headers.first(name: ":status") ?? "?")
                    }
                case H2Frame.rstStream:
                    if frame.word(at: 0) == 0x7 {
                        refused.insert(frame.stream)
                    } else {
                        other.append("RST \(frame.word(at: 0))")
                    }
                case H2Frame.goAway:
                    other.append("GOAWAY \(frame.word(at: 4))")
                case H2Frame.ping where frame.flags & H2Frame.ack == 0:
                    connection.send(
                        H2Frame(type: H2Frame.ping, flags: H2Frame.ack, stream: 0, payload: frame.payload).bytes)
                default:
                    break
                }
            }
        }
        #expect(advertised == 100)
        #expect(other.isEmpty, "\(other.prefix(5))")
        #expect(ok.count + refused.count == streams.count)
        #expect(ok.count >= 100)
        #expect(!refused.isEmpty)
        await server.stop()
        let recorded = try server.service.store.results(for: device, limit: 10_000)
        #expect(Set(recorded.compactMap { $0["apns_id"]?.stringValue }) == Set(ok.values))
        #expect(recorded.count == ok.count)
        #expect(recorded.allSatisfy { $0["acknowledged"]?.boolValue == true })
    }

    /// `--throttle-after-rejection`, as providers report APNs: a rejection brings SETTINGS_MAX_CONCURRENT_STREAMS 1,
    /// enforced (a burst of three: one answered, two refused); the next 200 brings the configured limit back, and a
    /// burst is answered whole again; so do 5 s without a rejection. Off (the default), a rejection changes nothing.
    @Test(arguments: [true, false])
    func aRejectionThrottlesTheConnectionUntilThe200(throttling: Bool) async throws {
        let server = try await InProcessServer(
            PushServerConfiguration(
                host: "127.0.0.1", port: 0,
                streams: StreamSettings(maxConcurrentStreams: 50, throttleAfterRejection: throttling)),
            device: device)
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let body = Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        var reader = H2FrameReader()
        /// What one stream got, and every limit the server's SETTINGS said, in order.
        var outcomes: [UInt32: String] = [:]
        var limits: [UInt32] = []
        var goAways = 0
        func send(_ streams: [UInt32], token: String) throws {
            var bytes: [UInt8] = []
            for stream in streams {
                bytes += try H2Frame.post(
                    stream: stream, path: "/3/device/\(token)", headers: [("apns-topic", "org.example.app")],
                    body: body, encoder: &encoder)
            }
            connection.send(bytes)
        }
        /// Reads until every stream of `streams` has its outcome and `limitCount` limits were said (20 s at most).
        func collect(_ streams: [UInt32], limitCount: Int = 0) throws {
            let deadline = Date().addingTimeInterval(20)
            while streams.contains(where: { outcomes[$0] == nil }) || limits.count < limitCount, Date() < deadline,
                let bytes = connection.read(timeout: 2)
            {
                for frame in reader.feed(bytes) {
                    switch frame.type {
                    case H2Frame.settings where frame.flags & H2Frame.ack == 0:
                        connection.send(
                            H2Frame(type: H2Frame.settings, flags: H2Frame.ack, stream: 0, payload: []).bytes)
                        for offset in stride(from: 0, to: frame.payload.count, by: 6)
                        where frame.payload[offset] == 0 && frame.payload[offset + 1] == 3 {
                            limits.append(frame.word(at: offset + 2))
                        }
                    case H2Frame.headers:
                        var block = ByteBuffer(bytes: frame.payload)
                        outcomes[frame.stream] = try decoder.decodeHeaders(from: &block).first(name: ":status")
                    case H2Frame.rstStream:
                        outcomes[frame.stream] = frame.word(at: 0) == 0x7 ? "refused" : "RST \(frame.word(at: 0))"
                    case H2Frame.goAway:
                        goAways += 1
                    default:
                        break
                    }
                }
            }
        }
        connection.send(H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes)
        try send([1], token: "00ff")
        try collect([1])
        #expect(outcomes[1] == "400")
        try send([3, 5, 7], token: token)
        try collect([3, 5, 7])
        if throttling {
            #expect([3, 5, 7].map { outcomes[$0] } == ["200", "refused", "refused"])
        } else {
            #expect([3, 5, 7].map { outcomes[$0] } == ["200", "200", "200"])
        }
        try send([9, 11, 13], token: token)
        try collect([9, 11, 13])
        #expect([9, 11, 13].map { outcomes[$0] } == ["200", "200", "200"])
        // The preface's, then (throttling) 1 after the 400 and 50 again after the 200.
        #expect(limits == (throttling ? [50, 1, 50] : [50]))
        if throttling {
            // Throttled again, and lifted by 5 s without a rejection, no 200 needed.
            try send([15], token: "00ff")
            try collect([15])
            let rejected = Date()
            try collect([], limitCount: 5)
            #expect(limits == [50, 1, 50, 1, 50])
            #expect(Date().timeIntervalSince(rejected) > 4)
        }
        #expect(goAways == 0)
        await server.stop()
    }

    /// A lower stream id after a higher one is a connection error (RFC 9113 §5.1.1): the connection ends with
    /// GOAWAY(PROTOCOL_ERROR). Every push recorded either got its 200 or is recorded as not acknowledged.
    @Test func aConnectionErrorLeavesNoRecordedPushWithoutA200UnlessMarked() async throws {
        let server = try await InProcessServer(PushServerConfiguration(host: "127.0.0.1", port: 0), device: device)
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let body = Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        var bytes = H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
        for stream: UInt32 in [9, 11, 13, 15, 5] {
            bytes += try H2Frame.post(
                stream: stream, path: "/3/device/\(token)", headers: [("apns-topic", "org.example.app")], body: body,
                encoder: &encoder)
        }
        connection.send(bytes)
        var reader = H2FrameReader()
        var answered = Set<String>()
        var goAwayError: UInt32?
        while let read = connection.read(timeout: 10), !read.isEmpty {
            for frame in reader.feed(read) {
                if frame.type == H2Frame.headers {
                    var block = ByteBuffer(bytes: frame.payload)
                    let headers = try decoder.decodeHeaders(from: &block)
                    if headers.first(name: ":status") == "200", let id = headers.first(name: "apns-id") {
                        answered.insert(id)
                    }
                } else if frame.type == H2Frame.goAway {
                    goAwayError = frame.word(at: 4)
                }
            }
        }
        #expect(goAwayError == 0x1)
        await server.stop()
        // Marks of lost answers are written on their own threads: wait for them (bounded).
        var recorded: [JSON] = []
        for _ in 0..<50 {
            recorded = try server.service.store.results(for: device, limit: 100)
            if server.service.acknowledgements.count == 0 { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        recorded = try server.service.store.results(for: device, limit: 100)
        for result in recorded {
            let id = result["apns_id"]?.stringValue ?? ""
            let acknowledged = result["acknowledged"]?.boolValue ?? true
            #expect(
                answered.contains(id) || !acknowledged, "push \(id) recorded as acknowledged but no 200 was received")
        }
    }
}
