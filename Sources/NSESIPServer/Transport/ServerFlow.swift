import NIOCore
import NSESIP
import Synchronization

private let flowCounter = Atomic<UInt64>(0)

/// A path to a peer: one TCP/TLS connection, or a UDP listener plus the peer's source address (rport/received).
///
/// `send` never waits: the server answers and forwards from its actor, so it writes on the channel's event loop
/// and goes on (the write passes the `NIOAsyncChannel`'s handler as its outbound writer's would, in order).
final class ServerFlow: Sendable, CustomStringConvertible {
    let key: String
    let kind: SIPTransportKind
    /// The connection (or the UDP listener) itself, for its state and addresses.
    let channel: any Channel
    let remote: SocketAddress
    let local: SocketAddress?

    init(kind: SIPTransportKind, channel: any Channel, remote: SocketAddress) {
        self.kind = kind
        self.channel = channel
        self.remote = remote
        self.local = channel.localAddress
        if kind == .udp {
            key = "udp|\(local?.port ?? 0)|\(remote.ipAddress ?? "?"):\(remote.port ?? 0)"
        } else {
            let n = flowCounter.wrappingAdd(1, ordering: .relaxed).newValue
            key = "\(kind.rawValue)#\(n)"
        }
    }

    /// True while the connection (or the UDP listener) is open.
    var isLive: Bool { channel.isActive }

    var localHost: String { local?.ipAddress ?? "127.0.0.1" }
    var localPort: Int { local?.port ?? 0 }
    var remoteHost: String { remote.ipAddress ?? "" }
    var remotePort: Int { remote.port ?? 0 }

    /// Writes wire bytes to the peer without waiting (dropped once the connection or listener has closed).
    func send(_ bytes: [UInt8]) {
        let buffer = ByteBuffer(bytes: bytes)
        if kind == .udp {
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: buffer), promise: nil)
        } else {
            channel.writeAndFlush(buffer, promise: nil)
        }
    }

    /// Closes the connection without answering (the fault knob `resetConnectionAfterRegister`, streams only).
    func close() {
        channel.close(promise: nil)
    }

    var description: String { "\(kind.rawValue):\(remoteHost):\(remotePort)" }
}

/// What the network layer hands to the server actor, in arrival order.
enum InboundEvent: Sendable {
    case message(SIPMessage, ServerFlow)
    case datagram(SIPMessage?, ServerFlow)
}
