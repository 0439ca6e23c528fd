import Logging
import NSEExtension
import NSEProtocol
import NSESIP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// A warm process keeps its heap's top between pushes rather than give it back and fault it in again.
ExtensionHeap.keepTop()
// The process's one logger (swift-log's default handler: stderr); the library takes it, never makes its own.
let reference = ReferenceExtension(logger: Logger(label: "nse.extension"))
// Under `--extension-launch fork`, this process rehearses one push and forks the push processes, each of which goes
// on from here; otherwise it goes on at once.
ForkServer.serveIfAsked(warmUp: reference.rehearse)
// Every task on the process's one event-loop thread, not the cooperative pool (set before any task starts).
EventLoopGlobalExecutor.install()
exit(reference.main())
