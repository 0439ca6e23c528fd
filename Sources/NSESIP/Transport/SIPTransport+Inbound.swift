import Logging
import NIOCore
import NIOSSL
import NSESystem

extension SIPTransport {
    /// The messages a connection receives, in order. It ends when the peer closes the connection (or `close()`
    /// does), and throws the `SIPError` that ended it otherwise: a framing error, a message over the limits, a TLS
    /// failure, a stream closed in the middle of a message, an unreachable UDP destination.
    ///
    /// Single-pass, as the channel's inbound stream it reads (one iterator per connection). The error that ends
    /// it is logged here, where it is read.
    public struct Inbound: AsyncSequence, Sendable {
        public typealias Element = SIPMessage
        public typealias Failure = SIPError

        private let stream: NIOAsyncChannelInboundStream<SIPMessage>
        private let kind: SIPTransportKind
        private let tap: SIPTrace.Tap?
        private let logger: Logger

        init(
            _ stream: NIOAsyncChannelInboundStream<SIPMessage>, kind: SIPTransportKind, tap: SIPTrace.Tap?,
            logger: Logger
        ) {
            self.stream = stream
            self.kind = kind
            self.tap = tap
            self.logger = logger
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(stream.makeAsyncIterator(), kind: kind, tap: tap, logger: logger)
        }

        /// Reads the channel's inbound stream, its errors made `SIPError`s.
        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Element = SIPMessage
            public typealias Failure = SIPError

            private var inner: NIOAsyncChannelInboundStream<SIPMessage>.AsyncIterator
            private let kind: SIPTransportKind
            private let tap: SIPTrace.Tap?
            private let logger: Logger

            init(
                _ inner: NIOAsyncChannelInboundStream<SIPMessage>.AsyncIterator, kind: SIPTransportKind,
                tap: SIPTrace.Tap?, logger: Logger
            ) {
                self.inner = inner
                self.kind = kind
                self.tap = tap
                self.logger = logger
            }

            public mutating func next() async throws(SIPError) -> SIPMessage? {
                let message: SIPMessage?
                do {
                    message = try await inner.next()
                } catch {
                    // A reading cancelled by its owner is this side closing, not the peer.
                    if !(error is CancellationError) { tap?.ended() }
                    throw SIPTransport.failure(error, kind: kind, logger: logger)
                }
                if let tap {
                    if let message { tap.trace.received(message) } else { tap.ended() }
                }
                return message
            }
        }
    }

    /// What ended a connection, as a `SIPError` (logged): the decoder's and the handlers' own errors as they are,
    /// TLS and socket errors named (never a message's content).
    static func failure(_ error: any Error, kind: SIPTransportKind, logger: Logger) -> SIPError {
        if error is CancellationError {
            // The reading task was cancelled: its owner is closing the connection.
            logger.debug("sip connection reading cancelled")
            return SIPError(.closed, "\(kind.rawValue) connection reading cancelled")
        }
        if let sslError = error as? NIOSSLError, case .uncleanShutdown = sslError {
            // Peers often close TCP without a TLS close_notify; an ordinary close, not worth a warning.
            logger.debug("sip tls peer closed without close_notify")
        } else if kind.isReliable {
            // (A UDP socket ends only on an unreachable destination, which its handler logs.)
            logger.warning(
                "sip connection failed", metadata: ["sip.transport": "\(kind.rawValue)", "sip.error": "\(error)"])
        }
        if let sipError = error as? SIPError { return sipError }
        return SIPError(.transport, "connection failed: \(NetworkFailure.reason(error))")
    }
}
