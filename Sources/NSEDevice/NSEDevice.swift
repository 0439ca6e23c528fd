// NSEDevice: the emulated app install, a container folder (`DIR`): identity and tokens, keys, strings, SIP account,
// iOS release, call settings, logs, and the App Group store its extension processes and the app share.
//
// Files:
//   Device, DeviceConfig      the container and its `device.json`; `Device.cached(at:)` for a process that lives on
//   AppGroup/                 AppGroupStore (`app-group.db`, as liblinphone keeps its state in one SQLite file):
//                             MessageStore (held, claimed by one process's pid, shown; why in its comment), VoIPState
//                             (strikes, call log), SharedCore (who runs the app's SIP core), TrustStore (trusted
//                             senders' keys, signed messages seen)
//   StringsCache, DeviceCache, AppGroupStoreCache
//                             what a warm extension or `nse serve` keeps of a device between pushes, checked against
//                             its files' stamps at each use (each read was a few % of a push's CPU; a store reopened
//                             per push re-read up to ~4 MB of log)
//   LiveActivities/           the app's ActivityKit state (`live-activities.json`): LiveActivity, LiveActivityState (the
//                             rules a push meets: push-to-start, timestamp order, ends, the priority-10 budget),
//                             LiveActivityPush (an ActivityKit payload read), LiveActivityStore (the file, locked)
//   VoIP, CallSettings        how the app handles a VoIP payload, and what the user does with a call
//   IOSVersion                the rules that changed between releases (iOS 11's 1 s start, VoIP report frameworks)
//   Keys/                     KeyRing: the device's X25519 keys, the current one and the RetiredKeys a rotation
//                             (`Device.rotateKey`, `nse device rotate-key`) keeps for their grace period
//   SenderIdentity            a sender's Ed25519 key file (`nse keys init`)
//     +Recipients             signs and seals once for several devices (`nse3`)
//   DeviceFolder              a folder of containers (`init-many`, the token index `serve --devices` keeps)
//   OwnerOnlyFile             keys and passwords others can read are refused
//   RecordedBody              a message body as a recorded replay case keeps it (sealed as it is, plain by length)
