import NSEPayload

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads the host's messages on a thread of its own for the rest of the process, so the SIP fetch hears
/// `timeWillExpire` the moment it comes (the channel is blocking I/O: a task must not sit in `poll`).
///
/// While an expiry handler is set, `timeWillExpire` goes to it; every other message (and an expiry notice with no
/// handler) is queued for `next(timeoutMilliseconds:)`. The thread ends when the host closes the pipe.
final class HostListener: HostConnection, @unchecked Sendable {
    private let channel: ExtensionChannel
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var queue: [HostMessage] = []
    private var ended = false
    private var expiryHandler: (@Sendable () -> Void)?
    private var thread = pthread_t()

    init(channel: ExtensionChannel) {
        self.channel = channel
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { context in
                let listener = Unmanaged<HostListener>.fromOpaque(context!).takeRetainedValue()
                listener.readUntilClosed()
                return nil
            }, context)
        if started != 0 {
            // No thread: nothing will read, so behave as a closed pipe rather than wait forever.
            Unmanaged<HostListener>.fromOpaque(context).release()
            ended = true
        }
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Calls `handler` on the host's expiry notice, at once if one already came and nobody read it.
    func onExpiry(_ handler: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(&mutex)
        let pending = queue.firstIndex(of: .timeWillExpire)
        if let pending { queue.remove(at: pending) } else { expiryHandler = handler }
        pthread_mutex_unlock(&mutex)
        if pending != nil { handler() }
    }

    /// Stops handing expiry notices to the handler: they are queued again.
    func stopExpiryHandler() {
        pthread_mutex_lock(&mutex)
        expiryHandler = nil
        pthread_mutex_unlock(&mutex)
    }

    @discardableResult
    func send(_ message: ExtensionMessage) -> Bool { channel.send(message) }

    func next(timeoutMilliseconds: Int32) throws(ProtocolError) -> HostMessage? {
        var until = timespec()
        if timeoutMilliseconds >= 0 {
            clock_gettime(CLOCK_MONOTONIC, &until)
            let nanoseconds = Int(until.tv_nsec) + Int(timeoutMilliseconds % 1000) * 1_000_000
            until.tv_sec += Int(timeoutMilliseconds / 1000) + nanoseconds / 1_000_000_000
            until.tv_nsec = nanoseconds % 1_000_000_000
        }
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while queue.isEmpty, !ended {
            if timeoutMilliseconds < 0 {
                pthread_cond_wait(&condition, &mutex)
            } else if pthread_cond_timedwait(&condition, &mutex, &until) == ETIMEDOUT {
                break
            }
        }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    var isClosed: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return ended && queue.isEmpty
    }

    private func readUntilClosed() {
        pthread_detach(pthread_self())
        while true {
            let message: HostMessage?
            do { message = try channel.next() } catch { message = nil }
            pthread_mutex_lock(&mutex)
            guard let message else {
                ended = true
                pthread_cond_broadcast(&condition)
                pthread_mutex_unlock(&mutex)
                return
            }
            let handler = message == .timeWillExpire ? expiryHandler : nil
            if handler != nil { expiryHandler = nil } else { queue.append(message) }
            pthread_cond_broadcast(&condition)
            pthread_mutex_unlock(&mutex)
            handler?()
        }
    }
}
