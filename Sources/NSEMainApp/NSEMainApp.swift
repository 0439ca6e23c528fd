// NSEMainApp: the main app in the foreground (`nse app`, docs/app.md): it takes the shared core from running
// extensions, registers, shows the messages that come to it itself, then goes to the background.
//
// Files:
//   MainAppMachine  its life as a pure state machine (taking the core, registering, refreshing, the background)
//   MainApp         its driver over one stream of inputs: the shared core's answers, the user agent's, SIGTERM and
//                   SIGUSR1, timers, each MESSAGE with the answer its sender waits for; messages opened with the
//                   extension's InAppMessage
