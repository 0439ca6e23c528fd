// NSESIPServer: the embedded SIP server (`nse sip-server`, replay's per-case server), Flexisip-like: registrar,
// fork-late store-and-forward for MESSAGE, call-holding proxy, each waking a sleeping device with an APNs push.
// A `Service`: SIGTERM/SIGINT stop it gracefully. Acknowledges only what has committed: a held MESSAGE is on disk
// before its 202, and delivered only on the device's 2xx.
//
// Folders:
//   Server/         SIPServer (an actor: the wiring, its state and one task tree) and its paths, `SIPServer+Request`
//                   (checks, answers), `+Register`, `+Message`, `+Call`, `+Room`; SIPFaultPlan (test knobs), EventLog
//   Transport/      Listeners (UDP/TCP/TLS as `NIOAsyncChannel`s served in `executeThenClose`), ServerFlow, CRLF pongs
//   Registrar/      Registrar: digest, bindings per AOR
//   Forwarding/     Forwarder (held messages out as client transactions), HeldStore, PendingSenders (each sender's
//                   one answer)
//   Rooms/          RoomTable: the chat rooms the server is the focus of (`SIPServer+Room`), each a ChatRoom with
//                   its participants' devices' invitation states; RoomInvitation, RoomSubscription, RoomMessages
//   Calls/          CallTable: calls held for a sleeping device, each a HeldCall with an explicit `Phase`, relayed with
//                   CallMessages once it registers; the dialog record-routed through the server
//   Push/           PushSender (over NSEAPNs: Flexisip's message alert; PushKit, or the IC_MSG alert, for calls),
//                   RFC 8599 PushParameters and what is wrong with them (PushParameterProblem)
//   Storage/        ServerDatabase: `sip-server.db`, bindings and held messages written through, restored on restart
//   Metrics/        SIPServerMetrics: what the server counts (swift-metrics, with the executable's factory)
//   Recording/      ServerCaseRecording (`--record DIR`: each push for a held MESSAGE or call as a replay case)
//   Configuration/  SIPServerConfiguration
