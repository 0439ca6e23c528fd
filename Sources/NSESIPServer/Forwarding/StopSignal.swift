/// Lets the server call off work it runs as a child task of its task tree (a retransmission loop, an accept timer)
/// before that work ends by itself: `stop()` ends `run` at once, instead of leaving a task asleep until its deadline.
///
/// A task group's children cannot be cancelled one by one; `run` races the work against this signal in a group of
/// its own. One signal serves one `run`.
struct StopSignal: Sendable {
    private let stream: AsyncStream<Never>
    private let continuation: AsyncStream<Never>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Never>.makeStream()
    }

    /// Ends the `run` using this signal (or makes it return at once when it has not begun); idempotent.
    func stop() {
        continuation.finish()
    }

    /// Runs `body` until it returns, `stop()` is called or the task is cancelled; the body's value, or nil when it
    /// was called off.
    func run<Value: Sendable>(_ body: @escaping @Sendable () async -> Value?) async -> Value? {
        let stream = self.stream
        return await withTaskGroup(of: Value?.self) { group in
            group.addTask {
                for await _ in stream {}
                return nil
            }
            group.addTask { await body() }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
