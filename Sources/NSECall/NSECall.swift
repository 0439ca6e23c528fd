// NSECall: the two ends of a call as their users drive them, each a pure state machine run by a driver over one
// merged stream of SIP events and timers.
//
// Folders:
//   Callee/   the app after its VoIP report (CalleeMachine, CalleeDriver): re-REGISTER, the INVITE by the push's
//             Call-ID, ring, answer or decline as the device's CallSettings say, until a CallEndReason
//   Caller/   the caller's phone (CallerMachine, CallerDriver, CallerReport): `nse call` and replay's `sip.call`
//   Offer/    CallOffer: the SDP and, on the end-to-end-encrypted route, the sealed call offer beside it
//   Session/  SessionDescription: the minimal SDP offer and answer
//   App/      AppCallProcess, AppCallRequest: the `nse-app` process the host starts for one call
