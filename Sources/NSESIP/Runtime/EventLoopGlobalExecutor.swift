import CConcurrencyHook
import NIOCore

/// Runs a process's Swift concurrency on its one event-loop thread (``SIPUserAgent/processEventLoopGroup``) instead
/// of the cooperative pool: the extension's, and `nse sip-server`'s.
///
/// A fetch is a chain of short steps that alternate between the event loop (a socket read, a write) and async code
/// (the fetch's state machine, the user agent's and transaction layer's actors): on the pool, every step is a hand-off
/// between threads (a futex or an eventfd wake-up and a context switch each way), and a warm process whose pool
/// threads ended while it waited for its next push starts them again. On the loop's thread a step queued from that
/// thread is only an entry in the loop's task list.
///
/// The Swift runtime sends every job for its global executor to `swift_task_enqueueGlobal_hook` when one is set
/// (SwiftNIO's `NIOSingletons` takeover sets the same hook through `dlsym`, which finds nothing in a static
/// executable such as the release `nse-extension`; the header declares it instead). Jobs resumed by a sleep still run
/// on the runtime's own threads; the extension's timers are event-loop callbacks (``SIPArmedTimer``).
///
/// The SIP server's requests are the same kind of chain (a read on the loop, the server actor, a write back), and
/// every push a server handles is several of them (the REGISTER, the held MESSAGE forwarded and answered, the IMDN).
///
/// Only for a process whose async code never blocks its thread: the extension's main thread waits for the fetch's
/// network part (`HostLink.run`), reading the host meanwhile; the content, a call report's
/// wait for the host included, is made back on the main thread, never on the loop. The SIP server's blocking work
/// (an outgoing push, its event lines to stdout) runs on threads of its own, and a server that syncs files to disk
/// (`--db`, `--record`) does not install it.
public enum EventLoopGlobalExecutor {
    /// Where every global-executor job runs once installed: the process's one event loop, started by the first job
    /// (a process that runs no task, such as one opening a sealed payload, starts no thread).
    private static let executor: any SerialExecutor = SIPUserAgent.processEventLoopGroup.next().executor

    private typealias Hook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Installs the hook; call once, from the main thread, before any task starts. False when a hook was already set
    /// (the pool stays in use).
    @discardableResult
    public static func install() -> Bool {
        guard nse_enqueue_global_hook() == nil else { return false }
        let hook: Hook = { job, _ in EventLoopGlobalExecutor.executor.enqueue(ExecutorJob(job)) }
        nse_set_enqueue_global_hook(unsafeBitCast(hook, to: UnsafeMutableRawPointer.self))
        return true
    }
}
