import NSEPayload
import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The host as the thread serving requests reads it, including while that thread waits for work done elsewhere (the
/// SIP fetch's network part on the event loop, an attachment's download): ``run(_:)`` and ``runOnThread(_:)`` wait
/// in one `poll` on the host's pipe and a wake-up descriptor, so the expiry notice is heard the moment it comes with
/// no thread of its own reading the pipe. Until 2026-11-29 a listener thread read it: every request, and every
/// `content-accepted`, went from that thread to the main one (a futex wake and two context switches each), two
/// hand-offs of a warm push's nine.
///
/// While an expiry handler is set, `timeWillExpire` goes to it; every other message (and an expiry notice with no
/// handler) is queued for ``next(timeoutMilliseconds:)``. Read by one thread (the one serving requests); the
/// handler is set and cleared from any.
final class HostLink: HostConnection, @unchecked Sendable {
    private let channel: ExtensionChannel
    private struct State {
        var queue: [HostMessage] = []
        var expiryHandler: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    /// What ended reading while waiting (a line too long, not a message): thrown by the next read.
    private var failure: ProtocolError?
    /// Written when waited-for work is done, its read end polled; made by the first wait, so a process on the enc
    /// path makes none.
    private var wake: WakePipe?

    init(channel: ExtensionChannel) {
        self.channel = channel
    }

    /// Calls `handler` on the host's expiry notice, at once if one already came and nobody read it.
    func onExpiry(_ handler: @escaping @Sendable () -> Void) {
        let pending = state.withLock { state in
            guard let index = state.queue.firstIndex(of: .timeWillExpire) else {
                state.expiryHandler = handler
                return false
            }
            state.queue.remove(at: index)
            return true
        }
        if pending { handler() }
    }

    /// Stops handing expiry notices to the handler: they are queued again.
    func stopExpiryHandler() {
        state.withLock { $0.expiryHandler = nil }
    }

    @discardableResult
    func send(_ message: ExtensionMessage) -> Bool { channel.send(message) }

    func next(timeoutMilliseconds: Int32) throws(ProtocolError) -> HostMessage? {
        let until =
            timeoutMilliseconds < 0 ? nil : SystemClock.monotonicNanoseconds() + UInt64(timeoutMilliseconds) * 1_000_000
        while true {
            if let queued = state.withLock({ $0.queue.isEmpty ? nil : $0.queue.removeFirst() }) { return queued }
            if let failure { throw failure }
            var remaining: Int32 = -1
            if let until {
                let now = SystemClock.monotonicNanoseconds()
                remaining = now >= until ? 0 : Int32(clamping: (until - now + 999_999) / 1_000_000)
            }
            guard let message = try channel.next(timeoutMilliseconds: remaining) else { return nil }
            // Queued unless the expiry handler takes it; the queue is read above.
            take(message)
        }
    }

    var isClosed: Bool {
        state.withLock { $0.queue.isEmpty } && (failure != nil || channel.isClosed)
    }

    /// Runs `operation` on the global executor (the process's event loop), blocking this thread until it is done and
    /// reading the host meanwhile.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let result = ResultBox<T>(wake: wakePipe())
        Task.detached { result.set(await operation()) }
        return wait(for: result)
    }

    /// Runs blocking `work` on a thread of its own, reading the host meanwhile. When no thread can be made it runs
    /// on this one, and the host is read only once it is done: an expiry notice then comes late, never lost.
    func runOnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T {
        let result = ResultBox<T>(wake: wakePipe())
        if !Threads.detach({ result.set(work()) }) { return work() }
        return wait(for: result)
    }

    /// Hands `message` to the expiry handler or queues it, in one step: ``onExpiry(_:)``, on the event loop, either
    /// finds the notice queued or is in place before it is looked for, never neither.
    private func take(_ message: HostMessage) {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            if message == .timeWillExpire, let handler = state.expiryHandler {
                state.expiryHandler = nil
                return handler
            }
            state.queue.append(message)
            return nil
        }
        handler?()
    }

    private func wakePipe() -> WakePipe? {
        if wake == nil { wake = WakePipe() }
        return wake
    }

    /// Blocks until `result` is set, taking every message the host sends meanwhile.
    private func wait<T>(for result: ResultBox<T>) -> T {
        let lines = channel.lines
        while true {
            if let value = result.current { return value }
            // Lines already read first: poll would not wake for them.
            while failure == nil {
                let message: HostMessage?
                do { message = try channel.bufferedMessage() } catch {
                    failure = error
                    break
                }
                guard let message else { break }
                take(message)
            }
            let reading = failure == nil && !lines.inputClosed
            // Without a wake-up pipe (none could be made) the value is looked at every 10 ms.
            let wakeRead = wake?.readEnd ?? -1
            var descriptors = [
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: reading ? lines.input : -1, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, wakeRead < 0 ? 10 : -1)
            if ready <= 0 { continue }
            if descriptors[0].revents != 0 { wake?.drain() }
            if descriptors[1].revents != 0 { _ = lines.fill() }
        }
    }
}
