import Synchronization

/// The request log's entry for one request while it is answered: the controllers add what they learn (the file, the
/// faults), the body's writer counts what it sends, and the entry goes into the log once the answer has ended, sent
/// whole or not. An answer dropped before its body was written (the client gone) is recorded when the last reference
/// goes, as incomplete.
final class LoggedRequest: Sendable {
    private let log: RequestLog
    /// nil once recorded.
    private let entry: Mutex<RequestLog.Entry?>

    init(log: RequestLog, entry: RequestLog.Entry) {
        self.log = log
        self.entry = Mutex(entry)
    }

    deinit { finish(complete: false) }

    func update(_ change: (inout RequestLog.Entry) -> Void) {
        entry.withLock { entry in
            guard var current = entry else { return }
            change(&current)
            entry = current
        }
    }

    func sent(_ bytes: Int) {
        update { $0.bytesSent += bytes }
    }

    /// Records the entry (once).
    func finish(complete: Bool) {
        let done = entry.withLock { entry -> RequestLog.Entry? in
            defer { entry = nil }
            entry?.complete = complete
            return entry
        }
        if let done { log.record(done) }
    }
}
