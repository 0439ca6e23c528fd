// nse-app: the app's process for one call, started by the host once the app reported the call (docs/voip.md).
// Links NSECall: `AppCallProcess` takes the call as the app would; its stdout is the host's, its logs go to stderr.
//
// Files:
//   main  logging to stderr, then `AppCallProcess.main(logger:)` with the process's one logger
