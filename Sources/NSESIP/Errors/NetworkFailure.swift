import NIOCore
import NIOPosix
import NIOSSL
public import NSESystem

extension NetworkFailure {
    /// `cannot listen on ADDRESS: why` / `cannot connect to ADDRESS: why`, why read from a NIO error.
    public static func describe(_ action: Action, _ address: String, _ error: any Error) -> String {
        describe(action, address, reason: reason(error))
    }

    /// Why, in a few lowercase words: the system's text for an errno, or what a TLS or timeout failure was.
    public static func reason(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return phrase(errno: error.errnoCode)
        case let error as NIOConnectionError:
            // Every address tried failed: the first one's reason (a name that resolved to several says the same).
            if let first = error.connectionErrors.first { return reason(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the name did not resolve" }
            return "no address to connect to"
        case let error as ChannelError:
            switch error {
            case .connectTimeout(let amount): return "no answer within \(amount.nanoseconds / 1_000_000) ms"
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return "connection closed"
            default: return "\(error)"
            }
        case let error as NIOSSLError:
            return "TLS failure (\(error))"
        case is BoringSSLError:
            return "TLS failure (certificate or handshake refused)"
        case let error as SocketAddressError:
            if case .unknown(let host, _) = error { return "unknown host \(host)" }
            return "not an address"
        default:
            return "\(error)"
        }
    }
}
