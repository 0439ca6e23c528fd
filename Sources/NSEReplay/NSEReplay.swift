// NSEReplay: `nse replay` (docs/replay.md): push scenarios run against the real host and compared with what they
// expect, so a change that breaks what the lock screen shows fails the build. Each case runs in its own folder, with
// its own devices and SIP server on a free port, so cases share nothing and run in parallel. It registers as the app
// through NSEAppRegistration, not through the extension.
//
// Files:
//   ReplayCase    the case format (docs/replay-case.schema.json): devices, sequences of steps (pushes, waits, messages
//                 sent, the main app, a server restart), signed seals, expectations
//   CaseRunner    one case: its SIP server, its caller (`sip.call`), the host in process
//   AppSteps      a sequence's main app (`nse app`, foreground, background, killed)
//   CasePayload   a push step's bytes: `{{enc}}` replaced by its plaintext, sealed (and signed) as the case asks
//   Expectations  only what a case states is checked (volatile fields are not)
//   ReplayRunner  search (folders without a case are named, not silently skipped), the parallel runner, reporters
//                 (text, JSON, JUnit), `--update`
