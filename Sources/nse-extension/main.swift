import NSEExtension

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Every task on the process's one event-loop thread, not the cooperative pool (set before any task starts).
EventLoopGlobalExecutor.install()
exit(ReferenceExtension().main())
