// NSEFuzzTargets: the parsers' libFuzzer entry points (docs/fuzzing.md): each takes arbitrary bytes and must never
// crash, trap or hang. Driven from the Fuzz/ package (so the main build never sees `-sanitize=fuzzer`) and replayed
// without libFuzzer by FuzzRegressionTests.
//
// Files:
//   FuzzTarget               the targets by name; a FuzzFinding when a cheap invariant breaks
//   PayloadIntakeTarget      strict intake, per push type
//   SIPTargets               the SIP parser, on a datagram and on a stream
//   EnvelopeTarget           the envelope parsed, opened with a test key, its plaintext read
//   MultiEnvelopeTarget      the nse3 envelope (several devices) parsed, opened with the same key; seal-then-open
//   ChatTarget               CPIM and IMDN
//   ConferenceTarget         a chat room's resource list and conference-info, read back as written
//   ExtensionProtocolTarget  protocol lines as both sides read them
//   APNsRequestTarget        a `POST` to `nse serve`, validated as PushResponder does
