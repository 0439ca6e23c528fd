// NSEExtension: nse's reference Notification Service Extension, a library so that `nse-extension` links it alone.
// Synchronous on purpose: an async `main` ends with `pthread_exit`, whose unwind costs a static executable ~20 ms.
// It serves requests until end of file (a warm process when the host keeps it): open the envelope and verify its
// sender, or fetch the message over SIP by Call-ID; rewrite, escalate a call offer, or fall back to the loc-key text.
//
// Files and folders:
//   ReferenceExtension  `main()` (hello, requests until EOF) and `plan(_:host:)`: content at once, or a fetch
//   EnvelopeOpener      opens `nse1`/`nse2` with the device's key; shows a signed one only from a verified sender
//     +Recipients       `nse3` (several devices): finds and opens this device's share; none is envelope-not-recipient
//   Rewriter            the content shown: a rewrite, a missed call, or the fallback naming why
//   CallEscalation      a call offer to `reportNewIncomingVoIPPushPayload` (report-voip), the alert silenced
//   ExtensionChannel    the protocol over stdin/stdout (re-exports NSEProtocol)
//   BlockingWait        a thread waits for async work, reading the host meanwhile when it has one; ResultBox
//   Fetch/              SIPFetch (`fetch(callID:request:logger:)`: register, take the held MESSAGE with the push's
//                       Call-ID, keep the others in the App Group store; the network on the event loop, the content
//                       on the calling thread), SIPFetch+Content (a FetchOutcome turned into content, in one place),
//                       FetchMachine (its decisions, no I/O), FetchDriver (the one loop over one merged stream of
//                       inputs), FetchOutcome (how any fetch ended), ReceivedContent, FetchReport (its diagnostics in
//                       `extension.info`), SIPExchange (the SIP exchange a recording host asked for, redacted)
//   HostLink/           HostConnection (the host as the content step uses it), HostLink (the host read by the thread
//                       serving requests, also while it waits for a fetch: time-will-expire heard the moment it comes),
//                       WakePipe (what wakes that thread's poll when the work is done)
//   Core/               CoreStopSignal (SIGUSR1: the main app takes the shared core), InAppMessage (a MESSAGE as the
//                       app in the foreground shows it)
