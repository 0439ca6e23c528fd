// NSEReplay: `nse replay` (docs/replay.md): push scenarios run against the real host and compared with what they
// expect, so a change that breaks what the lock screen shows fails the build. Each case runs in its own folder, with
// its own devices and SIP server on a free port, so cases share nothing and run in parallel. It registers as the app
// through NSEAppRegistration, not through the extension.
//
// Files:
//   ReplayCase    the case format (docs/replay-case.schema.json): devices, sequences of steps (pushes, waits, messages
//                 sent, the main app, a server restart), signed seals, expectations
//   CaseRunner    one case: its SIP server (or the scripted peer of a recorded exchange), its caller (`sip.call`),
//                 the host in process; a recorded case's device key installed from `device.key_file`
//   Script/       a recorded SIP exchange played back (`sip.script`): SIPScript (the format), SIPScriptPlayer (what
//                 to answer and send when, no I/O), ScriptedSIPPeer (the loopback peer over UDP, TCP, TLS)
//   AppSteps      a sequence's main app (`nse app`, foreground, background, killed)
//   CasePayload   a push step's bytes: `{{enc}}` replaced by its plaintext, sealed (and signed) as the case asks
//   Expectations  only what a case states is checked (volatile fields are not)
//   ReplayRunner  search (folders without a case are named, not silently skipped), the parallel runner, reporters
//                 (text, JSON, JUnit), `--update`
