import NSESystem
import Synchronization

/// What a user agent's connections sent and received, in order and timed: the SIP exchange of one fetch, for a
/// recording that a scripted peer plays back later (`nse serve --record`, `nse replay`'s `sip.script`).
///
/// Bounded, whatever the peer does: at most ``maxEvents`` events (later ones are only counted, ``dropped``), each
/// message's text cut at ``maxMessageBytes``. The transports feed it only when a configuration names one
/// (``SIPUserAgentConfiguration/trace``): without it nothing is copied. It holds message bodies as they were: its
/// reader redacts them before they leave the process.
public final class SIPTrace: Sendable {
    /// One thing that happened on a connection.
    public struct Event: Sendable, Equatable {
        /// What happened.
        public enum Kind: Sendable, Equatable {
            /// A message written, as its bytes.
            case sent([UInt8])
            /// A message read, in its wire form (Content-Length rewritten to its body).
            case received([UInt8])
            /// The peer closed the connection, or it failed; a close by this side is no event.
            case closed
        }

        /// Milliseconds since the trace started (monotonic), to 0.1 ms.
        public var milliseconds: Double
        public var kind: Kind
        /// The message was longer than ``SIPTrace/maxMessageBytes`` and is cut there.
        public var truncated: Bool

        public init(milliseconds: Double, kind: Kind, truncated: Bool = false) {
            self.milliseconds = milliseconds
            self.kind = kind
            self.truncated = truncated
        }
    }

    /// The most events kept.
    public static let maxEvents = 64
    /// The most bytes kept of one message.
    public static let maxMessageBytes = 64 * 1024

    private struct State {
        var events: [Event] = []
        var dropped = 0
        var transport: SIPTransportKind?
    }

    private let start: UInt64
    private let state = Mutex(State())

    /// Starts the trace's clock now.
    public init() {
        start = SystemClock.monotonicNanoseconds()
    }

    /// The events kept, in order.
    public var events: [Event] { state.withLock { $0.events } }
    /// How many events came after the first ``maxEvents`` and were not kept.
    public var dropped: Int { state.withLock { $0.dropped } }
    /// The transport of the first connection traced.
    public var transport: SIPTransportKind? { state.withLock { $0.transport } }

    /// Notes a connection opened over `kind` (the first one names the trace's transport).
    func opened(_ kind: SIPTransportKind) {
        state.withLock { if $0.transport == nil { $0.transport = kind } }
    }

    /// Records a message written.
    func sent(_ bytes: [UInt8]) {
        record(bytes, as: Event.Kind.sent)
    }

    /// Records a message read.
    func received(_ message: SIPMessage) {
        record(message.serialized(), as: Event.Kind.received)
    }

    /// Records that the peer closed the connection or that it failed.
    func closed() {
        let at = milliseconds()
        state.withLock { Self.append(Event(milliseconds: at, kind: .closed), to: &$0) }
    }

    private func record(_ bytes: [UInt8], as kind: ([UInt8]) -> Event.Kind) {
        let at = milliseconds()
        let truncated = bytes.count > Self.maxMessageBytes
        let kept = truncated ? Array(bytes.prefix(Self.maxMessageBytes)) : bytes
        state.withLock { Self.append(Event(milliseconds: at, kind: kind(kept), truncated: truncated), to: &$0) }
    }

    private static func append(_ event: Event, to state: inout State) {
        guard state.events.count < maxEvents else {
            state.dropped += 1
            return
        }
        state.events.append(event)
    }

    private func milliseconds() -> Double {
        (Double(SystemClock.monotonicNanoseconds() &- start) / 100_000).rounded() / 10
    }
}

extension SIPTrace {
    /// One traced connection, shared by its sending half and its `Inbound`: the trace, and whether this side is
    /// closing it (its end is then no event: only the peer's close or a failure is).
    final class Tap: Sendable {
        let trace: SIPTrace
        private let closingHere = Atomic<Bool>(false)

        init(_ trace: SIPTrace, kind: SIPTransportKind) {
            self.trace = trace
            trace.opened(kind)
        }

        /// This side closes the connection.
        func closing() {
            closingHere.store(true, ordering: .relaxed)
        }

        /// The connection's `Inbound` ended: an event unless this side closed it.
        func ended() {
            if !closingHere.load(ordering: .relaxed) { trace.closed() }
        }
    }
}
