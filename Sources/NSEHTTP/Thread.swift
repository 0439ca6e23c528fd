#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns the closure a new thread runs; retained across pthread_create.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Runs `body` on a new detached pthread, off the Swift concurrency pool.
func runOnNewThread(_ body: @escaping @Sendable () -> Void) throws(HTTPClientError) {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().run()
        return nil
    }, context)
    if result != 0 {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        throw HTTPClientError(code: .resourceExhausted, description: "could not start a thread for the request (error \(result))")
    }
    pthread_detach(thread)
}
