// NSETestSupport: what the test targets share.
//
// Files:
//   TestSupport       the built binaries run with a timeout (`TestSupport.run`, `nse`), fixtures, the one
//                     self-signed certificate helper (over NSECertificates)
//   ConcurrentRuns    `nseAtOnce`: the built `nse` started once per stdin, all at once, as iOS starts one per push
//   TemporaryFolders  test folders removed when the test process exits (`NSE_KEEP_TEST_DIRS=1` keeps them)
//   SmallFileSystem   a small tmpfs, to run out of disk for real (ENOSPC)
//   MetricsExposition a `/metrics` answer (Prometheus's text format) read sample by sample
