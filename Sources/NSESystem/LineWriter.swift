/// Writes lines to a file descriptor from a thread of its own, in the order they were given.
///
/// For a process whose tasks share one thread with its sockets (`nse sip-server` on its event loop): a reader that
/// stops reading its stdout blocks this thread's `write`, not the server. Lines wait in memory meanwhile, as they
/// would in an unbounded stream; `finish()` lets the thread end once they are written (or the descriptor fails).
public final class LineWriter: @unchecked Sendable {
    private enum State {
        case writing
        case finishing
        /// A write failed (the reader is gone): later lines are dropped.
        case failed
    }

    private let fd: Int32
    private let monitor = Monitor()
    /// Signalled when the thread ends.
    private let ended = Wakeup()
    // Guarded by `monitor`.
    private var pending: [String] = []
    private var state = State.writing

    /// Starts the writing thread; nil when no thread could be made.
    public init?(fd: Int32) {
        self.fd = fd
        guard Threads.detach({ [self] in drain() }) else { return nil }
    }

    /// Queues `line` (its newline included) for the thread.
    public func write(_ line: String) {
        monitor.locked {
            guard case .writing = state else { return }
            pending.append(line)
            monitor.broadcast()
        }
    }

    /// The thread ends once every queued line is written; waits for that `seconds` at most (a reader that stopped
    /// reading must not hold the process's exit up). False when it is still writing.
    @discardableResult
    public func finish(waitingUpTo seconds: Double) -> Bool {
        monitor.locked {
            guard case .writing = state else { return }
            state = .finishing
            monitor.broadcast()
        }
        guard ended.wait(seconds: seconds) else { return false }
        ended.signal()  // for a second call
        return true
    }

    private func drain() {
        defer { ended.signal() }
        while true {
            let (lines, finishing): ([String], Bool) = monitor.locked {
                while pending.isEmpty, case .writing = state { monitor.wait() }
                defer { pending.removeAll(keepingCapacity: true) }
                if case .writing = state { return (pending, false) }
                return (pending, true)
            }
            for line in lines where FileSystem.writeFully(fd: fd, Array(line.utf8)) != nil {
                monitor.locked {
                    state = .failed
                    pending = []
                }
                return
            }
            if finishing { return }
        }
    }
}
