// NSEAPNsServer: `nse serve`, the APNs emulator: APNs's provider API on Hummingbird 2 (HTTP/1.1, h2c, h2) that runs
// the host per push on worker threads. A push's row commits before its 200; a push a crash left unrun runs at the
// next start. On SIGTERM/SIGINT it stops accepting and finishes every accepted push.
//
// Files and folders:
//   PushServer              the listeners around one PushService
//   PushResponder           the HTTP side: Routes/ on one router
//   Routes/                 APNsRouter (Hummingbird's Router with APNs's 404 and 405), a controller per API:
//                           PushController (`POST /3/device/{token}`), ResultsController (`/v1/devices`, `/v1/events`,
//                           `/v1/notify`), ControlController (`/v1/control`, `/v1/requests`), PageController (`/`),
//                           MetricsController (`/metrics`)
//   ProviderAuthentication  provider tokens per connection (20-minute renewal rule); ProviderCertificate: client
//                           certificates (`--client-ca`, as Flexisip uses); ProviderIdentity: a request's provider
//   APNsValidation          APNs's rules, header by header: an AcceptedPush or APNs's status and reason
//   PushService             the jobs below wired together; DeviceRegistry (a token index, folder devices opened on
//                           first use)
//   Delivery/               PushAdmission (slot, row committed, then held, batched or queued), PushRunner (the host on
//                           the queue), DeliveryQueue (`--concurrency` worker threads, `--queue` waiting: 429 beyond)
//   EventHub, ResultCallbacks  `GET /v1/events` (server-sent events); POSTs to a device's callback URL (retried twice)
//   Results/                ResultStore (`.nse-results.db` per folder, `results.db` per lone device; GETs by pages of
//                           256), ResultRecorder (a result completed, recorded, told), UnfinishedPushes (a previous run's, rerun), Acknowledgements
//                           (a 200 that never reached the client is marked), ServeLock (one server per device)
//   Connections/            protocol sniffing (10 s preface timeout), the HTTP/2 connection manager (idle 1 h, GOAWAY
//                           then close within 5 s, REFUSED_STREAM over the advertised 1000 streams, throttled after a
//                           rejection), AnswerObserver, ProviderConnections (a provider's connections, for a cap)
//   Offline/                OfflineDevices (held, replaced, released), HeldPushes (what APNs keeps for an offline
//                           device: the newest per topic), StoreLiberties (the `apple` store's seeded liberties),
//                           LowPriorityBatch (low-priority pushes in bursts)
//   Control/                APNsFaultPlan and FaultRule (scripted answers, delays, GOAWAY, stream resets, connection
//                           delays and caps, unavailable), RequestLog
//   Fleet/                  FleetState: what the nodes of a fleet share (`--database`; NSEFleet keeps it in
//                           PostgreSQL), and FleetError
//   Metrics/                ServeMetrics: what the server counts (swift-metrics, with the executable's factory), served
//                           by Routes/MetricsController at `/metrics`
//   Recording/              `--record DIR`: CaseRecording (the switch, the device snapshot taken before a run, the
//                           files), RecordedCase (one push as a replay case; docs/replay.md)
//   Page/                   the lock-screen page at `/`: LockScreenPage, LockScreenAssets (its CSS and script)
//   LiveActivities/         `liveactivity` pushes: LiveActivityDelivery (applied to the device's ActivityKit state in
//                           place of the host), LiveActivityIndex (activity and push-to-start tokens, channel
//                           listeners, followed as the files change), LiveActivityCards (the page's activities)
//   Broadcast/              iOS 18 channels: ChannelStore (`channels.db`), BroadcastValidation, BroadcastFanOut (a
//                           broadcast to every listening activity), served by Routes/ChannelController and
//                           Routes/BroadcastController; every provider route checks its caller with ProviderIdentity
