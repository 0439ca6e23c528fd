import NSEAPNsServer
import Synchronization

/// One database round trip for every item that came while the previous one was out (group commit): each caller
/// still waits for its own item to be done, so nothing is answered before the database has it, but under load a
/// push pays a share of one round trip instead of one of its own; alone, it waits for nobody. Used by the request
/// log (``FleetRequestLog``) and the fault rules (``FleetFaults``), the two awaits every push makes.
final class GroupCommit<Item: Sendable, Answer: Sendable>: Sendable {
    /// Does a batch in one round trip: an answer per item, in order.
    typealias Run = @Sendable ([Item]) async throws(FleetError) -> [Answer]

    private struct Waiting {
        var item: Item
        var done: CheckedContinuation<Result<Answer, FleetError>, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        /// A round trip is out; what comes meanwhile goes in the next.
        var running = false
    }

    private let limit: Int
    private let run: Run
    private let state = Mutex(State())

    /// - Parameter limit: the most items one round trip takes.
    init(limit: Int, _ run: @escaping Run) {
        self.limit = limit
        self.run = run
    }

    func submit(_ item: Item) async throws(FleetError) -> Answer {
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<Answer, FleetError>, Never>) in
            let start = state.withLock { state -> Bool in
                state.waiting.append(Waiting(item: item, done: done))
                defer { state.running = true }
                return !state.running
            }
            if start { Task { await self.drain() } }
        }
        return try result.get()
    }

    /// Runs batches until nobody waits.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                let taken = Array(state.waiting.prefix(limit))
                state.waiting.removeFirst(taken.count)
                if taken.isEmpty { state.running = false }
                return taken
            }
            guard !batch.isEmpty else { return }
            do {
                let answers = try await run(batch.map(\.item))
                for (index, waiting) in batch.enumerated() {
                    waiting.done.resume(
                        returning: index < answers.count
                            ? .success(answers[index]) : .failure(FleetError("fleet database: an answer missing")))
                }
            } catch {
                for waiting in batch { waiting.done.resume(returning: .failure(error)) }
            }
        }
    }
}
