// nse-extension: the per-notification process: links NSEExtension alone, so it starts fast and stays small. In
// release builds a fully static executable (no loader, no relocations: about 3.5 ms and 4.5 MB peak RSS against
// 6–9 ms and 7.4 MB dynamically linked), its hot functions first (`hot-functions.order`; docs/performance.md).
//
// Files:
//   main  installs EventLoopGlobalExecutor before any task starts, then `ReferenceExtension(logger:).main()`
