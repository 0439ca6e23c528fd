import Logging
import NIOCore
import NIOPosix
import NSETestSupport
import Testing

@testable import NSESIP

/// `SIPTransport.withConnection` against a scripted loopback TCP peer: what `Inbound` yields and how it ends, sends,
/// and the channel's lifetime. Every wait is bounded by the suite's time limit.
@Suite(.serialized, .timeLimit(.minutes(1))) struct TransportTests {
    static let logger = Logger(label: "test.sip.transport")

    static let ok =
        "SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP 127.0.0.1;branch=z9hG4bK1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
    static let accepted =
        "SIP/2.0 202 Accepted\r\nVia: SIP/2.0/TCP 127.0.0.1;branch=z9hG4bK2\r\nCSeq: 2 MESSAGE\r\nContent-Length: 2\r\n\r\nhi"

    /// Listens on loopback, runs `script` on the first connection accepted (then closes it), and runs `body` with
    /// the listener's endpoint; everything is closed when it returns.
    static func withPeer<Result: Sendable>(
        _ script:
            @escaping @Sendable (NIOAsyncChannelInboundStream<ByteBuffer>, NIOAsyncChannelOutboundWriter<ByteBuffer>)
            async throws -> Void,
        _ body: (SIPEndpoint, any EventLoopGroup) async throws -> Result
    ) async throws -> Result {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let server = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
            let endpoint = SIPEndpoint(host: "127.0.0.1", port: server.channel.localAddress?.port ?? 0, transport: .tcp)
            let result = try await server.executeThenClose { connections in
                async let peer: Void = {
                    for try await connection in connections {
                        try await connection.executeThenClose { inbound, outbound in try await script(inbound, outbound)
                        }
                        return
                    }
                }()
                let result = try await body(endpoint, group)
                try await peer
                return result
            }
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Reads the peer's bytes until `count` have arrived or the connection ends.
    static func read(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, count: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await buffer in inbound {
            bytes += buffer.readableBytesView
            if bytes.count >= count { break }
        }
        return bytes
    }

    @Test func receivesDecodedMessagesInOrderAndSendsTheWireBytes() async throws {
        var options = SIPRequest(method: "OPTIONS", uri: SIPURI(host: "127.0.0.1"))
        options.headers.add("Via", "SIP/2.0/TCP 127.0.0.1;branch=z9hG4bK3")
        options.headers.add("CSeq", "3 OPTIONS")
        let request = SIPMessage.request(options)
        let wire = request.serialized()
        let (peerReceived, received) = AsyncStream<[UInt8]>.makeStream()
        let statuses = try await Self.withPeer { inbound, outbound in
            // Both responses in one segment: the decoder splits them.
            try await outbound.write(ByteBuffer(string: Self.ok + Self.accepted))
            received.yield(try await Self.read(inbound, count: wire.count))
            received.finish()
        } _: { endpoint, group in
            try await SIPTransport.withConnection(to: endpoint, group: group, logger: Self.logger) {
                transport, inbound in
                var statuses: [Int] = []
                do throws(SIPError) {
                    for try await message in inbound {
                        guard case .response(let response) = message else { continue }
                        statuses.append(response.statusCode)
                        if response.statusCode == 202 {
                            #expect(response.body == Array("hi".utf8))
                            try transport.send(request)
                        }
                    }
                } catch {
                    Issue.record("the connection ended with \(error)")
                }
                return statuses
            }
        }
        #expect(statuses == [200, 202])
        var iterator = peerReceived.makeAsyncIterator()
        #expect(await iterator.next() == wire)
    }

    /// A connection turns Nagle's algorithm off (TCP_NODELAY, a `tcpOption`) and leaves SO_DEBUG alone: the option
    /// was given as a `socketOption`, whose level is SOL_SOCKET, where its number is SO_DEBUG's.
    @Test func theConnectionIsNoDelayAndNotDebug() async throws {
        let options = try await Self.withPeer { inbound, _ in
            _ = try await Self.read(inbound, count: 1)
        } _: { endpoint, group in
            try await SIPTransport.withConnection(to: endpoint, group: group, logger: Self.logger) { transport, _ in
                let options = TestSupport.tcpSocketOptions(peerPort: endpoint.port)
                try? transport.send(.request(SIPRequest(method: "OPTIONS", uri: SIPURI(host: "127.0.0.1"))))
                return options
            }
        }
        #expect(options?.debug == 0)
        #expect(options.map { $0.noDelay != 0 } == true)
    }

    /// Connects to `endpoint` and reads the inbound side to its end: how many messages came, and the error it ended
    /// with, if any.
    static func countInbound(_ endpoint: SIPEndpoint, _ group: any EventLoopGroup) async throws -> (Int, SIPError?) {
        try await SIPTransport.withConnection(to: endpoint, group: group, logger: Self.logger) { _, inbound in
            var messages = 0
            do throws(SIPError) {
                for try await _ in inbound { messages += 1 }
                return (messages, SIPError?.none)
            } catch {
                return (messages, error)
            }
        }
    }

    @Test func peerClosingInTheMiddleOfAMessageEndsInboundWithATransportError() async throws {
        let outcome = try await Self.withPeer { _, outbound in
            // The head promises 10 body bytes; 3 come, then the peer closes.
            try await outbound.write(
                ByteBuffer(string: "SIP/2.0 200 OK\r\nCSeq: 1 OPTIONS\r\nContent-Length: 10\r\n\r\nabc"))
        } _: { endpoint, group in
            try await Self.countInbound(endpoint, group)
        }
        #expect(outcome.0 == 0)
        #expect(outcome.1?.code == .transport)
        #expect(outcome.1?.description.contains("in the middle of a message") == true)
    }

    @Test func peerClosingBetweenMessagesEndsInboundWithoutError() async throws {
        let outcome = try await Self.withPeer { _, outbound in
            try await outbound.write(ByteBuffer(string: Self.ok + "\r\n\r\n"))
        } _: { endpoint, group in
            try await Self.countInbound(endpoint, group)
        }
        #expect(outcome.0 == 1)
        #expect(outcome.1 == nil)
    }

    @Test func aSendAfterCloseFailsCleanlyAndInboundEnds() async throws {
        let (peerEnded, ended) = AsyncStream<Int>.makeStream()
        try await Self.withPeer { inbound, _ in
            ended.yield(try await Self.read(inbound, count: .max).count)
            ended.finish()
        } _: { endpoint, group in
            try await SIPTransport.withConnection(to: endpoint, group: group, logger: Self.logger) {
                transport, inbound in
                #expect(transport.isActive)
                await transport.close()
                #expect(!transport.isActive)
                expectSIPError(.closed) { try transport.send(bytes: Array(Self.ok.utf8)) }
                var messages = 0
                do throws(SIPError) {
                    for try await _ in inbound { messages += 1 }
                } catch {
                    Issue.record("inbound ended with \(error) after close()")
                }
                #expect(messages == 0)
            }
        }
        // The peer saw the connection end, with no byte of the refused send.
        var iterator = peerEnded.makeAsyncIterator()
        #expect(await iterator.next() == 0)
    }

    @Test func theChannelIsClosedWhenTheScopeEnds() async throws {
        let (peerEnded, ended) = AsyncStream<[UInt8]>.makeStream()
        let kept = try await Self.withPeer { inbound, _ in
            ended.yield(try await Self.read(inbound, count: .max))
            ended.finish()
        } _: { endpoint, group in
            try await SIPTransport.withConnection(to: endpoint, group: group, logger: Self.logger) { transport, _ in
                try? transport.send(bytes: Array(Self.ok.utf8))
                return transport
            }
        }
        // Returned from its scope, the transport's channel is closed: the peer read to its end, and sends fail.
        #expect(!kept.isActive)
        expectSIPError(.closed) { try kept.send(bytes: Array(Self.ok.utf8)) }
        var iterator = peerEnded.makeAsyncIterator()
        #expect(await iterator.next() == Array(Self.ok.utf8))
    }

    @Test func aMessageOverTheLimitIsNotSent() async throws {
        var limits = SIPParserLimits.default
        limits.maxMessageSize = 64
        let (peerEnded, ended) = AsyncStream<Int>.makeStream()
        try await Self.withPeer { inbound, _ in
            ended.yield(try await Self.read(inbound, count: .max).count)
            ended.finish()
        } _: { endpoint, group in
            try await SIPTransport.withConnection(to: endpoint, limits: limits, group: group, logger: Self.logger) {
                transport, _ in
                expectSIPError(.messageTooLarge) { try transport.send(bytes: Array(Self.accepted.utf8)) }
            }
        }
        var iterator = peerEnded.makeAsyncIterator()
        #expect(await iterator.next() == 0)
    }

    @Test func aConnectionThatCannotOpenIsATransportErrorAndBodyDoesNotRun() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let probe = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = probe.localAddress?.port ?? 1
        try await probe.close().get()
        var ran = false
        await expectSIPErrorAsync(.transport) {
            try await SIPTransport.withConnection(
                to: SIPEndpoint(host: "127.0.0.1", port: port, transport: .tcp), group: group, logger: Self.logger
            ) { _, _ in ran = true }
        }
        #expect(!ran)
        try await group.shutdownGracefully()
    }
}
