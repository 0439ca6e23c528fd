/// The server's events: each one streamed to `events` and kept (the newest `capacity`) for `eventLog()`.
struct EventLog {
    /// How many events `all` returns at most.
    static let capacity = 10_000

    let stream: AsyncStream<SIPServerEvent>
    private let continuation: AsyncStream<SIPServerEvent>.Continuation
    private var kept: [SIPServerEvent] = []

    init() {
        (stream, continuation) = AsyncStream<SIPServerEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    /// Keeps and streams one event. The oldest are dropped a quarter of the capacity at a time, so that a busy
    /// server does not move the whole log for every event.
    mutating func append(_ event: SIPServerEvent) {
        kept.append(event)
        if kept.count >= EventLog.capacity + EventLog.capacity / 4 { kept.removeFirst(kept.count - EventLog.capacity) }
        continuation.yield(event)
    }

    /// The newest events, oldest first.
    var all: [SIPServerEvent] { Array(kept.suffix(EventLog.capacity)) }

    /// Ends the stream.
    func finish() { continuation.finish() }
}
