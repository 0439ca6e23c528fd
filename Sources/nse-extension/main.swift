import Logging
import NSEExtension

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Every task on the process's one event-loop thread, not the cooperative pool (set before any task starts).
EventLoopGlobalExecutor.install()
// The process's one logger (swift-log's default handler: stderr); the library takes it, never makes its own.
exit(ReferenceExtension(logger: Logger(label: "nse.extension")).main())
