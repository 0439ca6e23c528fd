#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension TestSupport {
    /// How this process's TCP socket connected to `peerPort` on loopback is set: `SO_DEBUG` and `TCP_NODELAY`
    /// (nil when no such socket is open). Servers and clients under test run in the test process, so their sockets
    /// are its descriptors.
    public static func tcpSocketOptions(peerPort: Int) -> (debug: Int32, noDelay: Int32)? {
        for descriptor in Int32(0)..<4096 {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
            }
            guard named == 0, address.sin_family == sa_family_t(AF_INET),
                Int(UInt16(bigEndian: address.sin_port)) == peerPort
            else { continue }
            var debug: Int32 = -1
            var noDelay: Int32 = -1
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_DEBUG, &debug, &size) == 0 else { return nil }
            size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &size) == 0 else { return nil }
            return (debug, noDelay)
        }
        return nil
    }
}
