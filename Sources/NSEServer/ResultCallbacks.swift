public import Logging
import NIOPosix
public import NSEHTTP
public import NSEJSON
import NSESystem
import Synchronization

/// POSTs recorded results to the callback URL a device names (`nse device set --callback-url`), off the delivery
/// threads. A failed POST (no connection, a 5xx, a timeout) is retried twice, after 0.5 s and 2 s; the result
/// itself is already on disk, so a callback that never succeeds is logged, not lost.
public final class ResultCallbacks: Sendable {
    public static let retryDelays: [Double] = [0.5, 2]
    private let pool: NIOThreadPool
    private let pending = Mutex(0)
    private let client: HTTPClient
    private let logger: Logger
    private let timeout: Double

    public init(threads: Int = 2, client: HTTPClient = HTTPClient(maxResponseBodyBytes: 64 * 1024), timeout: Double = 5, logger: Logger) {
        pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
        self.client = client
        self.logger = logger
        self.timeout = timeout
    }

    /// Callbacks queued or in flight.
    public var inFlight: Int { pending.withLock { $0 } }

    /// Queues one POST of `result` to `url`.
    public func post(_ result: JSON, to url: String, apnsID: String) {
        pending.withLock { $0 += 1 }
        let body = result.serializedBytes()
        pool.submit { [self] _ in
            defer { pending.withLock { $0 -= 1 } }
            var request = HTTPRequest.post(url: url, json: body, headers: ["apns-id": apnsID])
            request.timeout = timeout
            request.connectTimeout = min(timeout, 5)
            var failure = ""
            for attempt in 0...Self.retryDelays.count {
                if attempt > 0 { Threads.sleep(seconds: Self.retryDelays[attempt - 1]) }
                do {
                    let response = try client.send(request)
                    if response.status < 500 {
                        if response.status >= 300 {
                            logger.warning("result callback refused", metadata: ["apns-id": .string(apnsID), "url": .string(url), "status": .stringConvertible(response.status)])
                        }
                        return
                    }
                    failure = "HTTP \(response.status)"
                } catch {
                    failure = (error as? HTTPClientError)?.description ?? "\(error)"
                }
            }
            logger.warning("result callback failed", metadata: ["apns-id": .string(apnsID), "url": .string(url), "error": .string(failure)])
        }
    }

    /// Waits (at most `seconds`) for queued callbacks, then stops the threads.
    public func drain(seconds: Double = 30) async {
        let deadline = Clock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while inFlight > 0, Clock.monotonicNanoseconds() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }
        try? await pool.shutdownGracefully()
    }
}
