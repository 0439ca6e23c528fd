import NSESystem
import Synchronization

/// Sends HTTP requests through libcurl, one connection per request.
public struct HTTPClient: Sendable {
    /// Largest accepted response body in bytes; larger bodies throw `.responseBodyTooLarge`.
    public var maxResponseBodyBytes: Int
    /// Largest accepted total size of response header lines in bytes.
    public var maxResponseHeaderBytes: Int

    /// Creates a client; the body limit defaults to 1 MiB.
    public init(maxResponseBodyBytes: Int = 1 << 20, maxResponseHeaderBytes: Int = 256 << 10) {
        self.maxResponseBodyBytes = maxResponseBodyBytes
        self.maxResponseHeaderBytes = maxResponseHeaderBytes
    }

    /// Sends `request` and blocks the calling thread until the response or an `HTTPClientError`.
    public func send(_ request: HTTPRequest) throws -> HTTPResponse {
        try perform(request, cancellation: nil)
    }

    /// Sends `request` on a dedicated thread (never blocking the concurrency pool); cancellable.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled {
            throw HTTPClientError(code: .cancelled, description: "request cancelled before it started")
        }
        let flag = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                // The blocking transfer runs on its own thread, off the Swift concurrency pool.
                let started = Threads.detach {
                    continuation.resume(with: Result { try self.perform(request, cancellation: flag) })
                }
                if !started {
                    continuation.resume(
                        throwing: HTTPClientError(
                            code: .resourceExhausted, description: "could not start a thread for the request"))
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }

    private func perform(_ request: HTTPRequest, cancellation: CancellationFlag?) throws(HTTPClientError)
        -> HTTPResponse
    {
        let limits = CurlTransferLimits(maxBodyBytes: maxResponseBodyBytes, maxHeaderBytes: maxResponseHeaderBytes)
        let easy = try CurlEasy()
        return try easy.perform(request, limits: limits, cancellation: cancellation)
    }
}

/// Response size limits handed to the curl layer.
struct CurlTransferLimits: Sendable {
    var maxBodyBytes: Int
    var maxHeaderBytes: Int
}

/// Set from a task cancellation handler; wakes the transfer loop so it stops at once.
final class CancellationFlag: Sendable {
    private struct State {
        var cancelled = false
        var waker: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    func cancel() {
        // The waker runs under the lock, so `unregister()` guarantees it is no longer running.
        state.withLock { state in
            state.cancelled = true
            state.waker?()
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Installs the function that interrupts a waiting transfer.
    func register(_ waker: @escaping @Sendable () -> Void) {
        state.withLock { $0.waker = waker }
    }

    /// Removes the waker; after this returns it is never called again.
    func unregister() {
        state.withLock { $0.waker = nil }
    }
}
