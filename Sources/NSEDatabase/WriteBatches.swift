import NSESystem
import Synchronization

/// Group commit for one database: writes that arrive while another batch commits wait, then go in the next batch,
/// one transaction and one sync for all of them (``Database/batchedWrite(_:_:)``). The first waiting thread runs
/// the batch for the others (leader and followers, no thread of its own), so a write alone is not delayed.
final class WriteBatches: @unchecked Sendable {
    private let monitor = Monitor()
    // Guarded by `monitor`.
    private var pending: [any BatchedWrite] = []
    private var leading = false
    /// Batches committed so far.
    let commits = Atomic<Int>(0)

    /// Writes queued behind the batch committing now.
    var waiting: Int { monitor.locked { pending.count } }

    /// Returns once `write` has been run and its batch committed (or failed), by this thread or another.
    func submit(_ write: any BatchedWrite, execute: ([any BatchedWrite]) -> Void) {
        var queued = false
        while true {
            let batch: [any BatchedWrite]? = monitor.locked {
                if !queued {
                    pending.append(write)
                    queued = true
                }
                while !write.isDone && leading { monitor.wait() }
                if write.isDone { return nil }
                leading = true
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            guard let batch else { return }
            execute(batch)
            commits.add(1, ordering: .relaxed)
            // Each write's statements are its caller's closure, lent for the wait: let go before the caller goes on.
            for done in batch { done.releaseBody() }
            monitor.locked {
                for done in batch { done.isDone = true }
                leading = false
                monitor.broadcast()
            }
        }
    }
}

/// One write of a batch: its statements, and what became of them.
protocol BatchedWrite: AnyObject, Sendable {
    var durability: Database.Durability { get }
    /// Set under the batches' monitor once its batch has committed or failed.
    var isDone: Bool { get set }
    /// Runs the write's statements; false when they failed (the batch rolls back to before them).
    func run(_ transaction: borrowing Database.Transaction) -> Bool
    /// The batch failed after the write ran (its commit): the write did not happen.
    func fail(_ error: DatabaseError)
    /// Drops the statements' closure (before the write is done).
    func releaseBody()
}

/// A write and its result.
final class BatchedWriteJob<T>: BatchedWrite, @unchecked Sendable {
    let durability: Database.Durability
    var isDone = false
    private var body: ((borrowing Database.Transaction) throws(DatabaseError) -> T)?
    private(set) var outcome: Result<T, DatabaseError>?

    init(
        _ durability: Database.Durability, _ body: @escaping (borrowing Database.Transaction) throws(DatabaseError) -> T
    ) {
        self.durability = durability
        self.body = body
    }

    func run(_ transaction: borrowing Database.Transaction) -> Bool {
        guard let body else { return false }
        do {
            outcome = .success(try body(transaction))
            return true
        } catch {
            outcome = .failure(error)
            return false
        }
    }

    func fail(_ error: DatabaseError) { outcome = .failure(error) }

    func releaseBody() { body = nil }
}
