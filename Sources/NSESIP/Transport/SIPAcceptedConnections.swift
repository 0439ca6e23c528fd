public import NIOCore
import Synchronization

/// The connections a TCP/TLS listener accepted that are still open: closed with the listener, and one that comes in
/// after that is closed at once.
///
/// A listener's connections are plain channels kept here (each ends its pipeline with a `SIPAcceptedStreamHandler`),
/// not `NIOAsyncChannel`s handed out through the listener's async sequence: NIO drops what that sequence still
/// buffers when its reader is cancelled, and a dropped `NIOAsyncChannel` stops the process (swift-nio #2813), which a
/// client connecting at SIGTERM could make happen.
public final class SIPAcceptedConnections: Sendable {
    private enum State {
        case open([ObjectIdentifier: any Channel])
        case closed
    }

    private let state = Mutex(State.open([:]))

    public init() {}

    /// Keeps an accepted connection until it closes; false, and the connection closed, once the listener has.
    public func add(_ channel: any Channel) -> Bool {
        let added = state.withLock { state in
            guard case .open(var channels) = state else { return false }
            state = .closed  // the enum lets go of the dictionary, which then grows without a copy
            channels[ObjectIdentifier(channel)] = channel
            state = .open(channels)
            return true
        }
        if !added { channel.close(promise: nil) }
        return added
    }

    /// Forgets a connection that has closed.
    public func remove(_ channel: any Channel) {
        state.withLock { state in
            guard case .open(var channels) = state else { return }
            state = .closed
            channels[ObjectIdentifier(channel)] = nil
            state = .open(channels)
        }
    }

    /// Closes every connection; those accepted from now on are closed as they come.
    public func closeAll() {
        let open = state.withLock { state -> [any Channel] in
            guard case .open(let channels) = state else { return [] }
            state = .closed
            return Array(channels.values)
        }
        for channel in open { channel.close(promise: nil) }
    }
}
