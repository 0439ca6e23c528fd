/// The server's one task tree: long-lived children given at `run` (the listeners, the inbound loop, the sweeper)
/// and a child per job `spawn`ed while it runs (retransmissions, timers, pushes, delayed requests).
///
/// `finish()` ends the tree: jobs spawned from then on are dropped, and `run` cancels every child and returns once
/// they have all ended.
struct TaskTree: Sendable {
    typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init() {
        (jobs, continuation) = AsyncStream<Job>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Runs `job` as a child of the tree (dropped once the tree is finished).
    func spawn(_ job: @escaping Job) {
        continuation.yield(job)
    }

    /// No more jobs: `run` cancels its children and returns.
    func finish() {
        continuation.finish()
    }

    /// Runs `children` and every spawned job until `finish()` (or until the task is cancelled).
    func run(_ children: [Job]) async {
        let jobs = self.jobs
        await withDiscardingTaskGroup { group in
            for child in children { group.addTask { await child() } }
            for await job in jobs { group.addTask { await job() } }
            group.cancelAll()
        }
    }
}
