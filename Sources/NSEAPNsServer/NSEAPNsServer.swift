// NSEAPNsServer: `nse serve`, the APNs emulator: APNs's provider API on Hummingbird 2 (HTTP/1.1, h2c, h2) that runs
// the host per push on worker threads. A push's row commits before its 200; a push a crash left unrun runs at the
// next start. On SIGTERM/SIGINT it stops accepting and finishes every accepted push.
//
// Files and folders:
//   PushServer              the listeners around one PushService
//   PushResponder           the routes (Hummingbird's Router): `POST /3/device/{token}`, `/v1/…`; APNs's 404 and 405
//   ProviderAuthentication  provider tokens per connection (20-minute renewal rule); ProviderCertificate: client
//                           certificates (`--client-ca`, as Flexisip uses)
//   APNsValidation          APNs's rules, header by header: an AcceptedPush or APNs's status and reason
//   PushService             accept, queue, run, record, tell; DeviceRegistry (a token index, folder devices opened on
//                           first use); DeliveryQueue (`--concurrency` worker threads, `--queue` waiting: 429 beyond)
//   EventHub, ResultCallbacks  `GET /v1/events` (server-sent events); POSTs to a device's callback URL (retried twice)
//   Results/                ResultStore (`results.db` per device; GETs read by pages of 256), Acknowledgements (a 200
//                           that never reached the client is marked), ServeLock (one server per device)
//   Connections/            protocol sniffing (10 s preface timeout), the HTTP/2 connection manager (idle 1 h, GOAWAY
//                           then close within 5 s, REFUSED_STREAM over the advertised 100 streams), AnswerObserver
//   Offline/                HeldPushes (what APNs keeps for an offline device: the newest per topic), LowPriorityBatch
//                           (low-priority pushes in bursts)
//   Control/                APNsFaultPlan and FaultRule (scripted answers, delays, GOAWAY, unavailable), RequestLog,
//                           the `/v1/control` routes
//   Page/                   the lock-screen page at `/`: LockScreenPage, LockScreenAssets (its CSS and script)
