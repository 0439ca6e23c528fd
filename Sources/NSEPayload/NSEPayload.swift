// NSEPayload: what a push carries, read as APNs and iOS read it. Only NSEJSON and NSESystem below it: the extension,
// the host and the servers all link it.
//
// Folders:
//   Payload/       Payload (the document and typed views: alert, Call-ID, `enc`), APS (its `aps` keys, read
//                  leniently as iOS does), PushType (its size limit: 4096 bytes, 5120 for voip)
//   Intake/        Intake: bytes in, a Payload or APNs's reason out (PayloadRejection); simctl `.apns` files
//   Localization/  StringsTable (the app's `.strings`, Linphone's defaults), Display (the lock screen)
//   Plaintext/     Plaintext: the decrypted content's schema (a message or a call offer)
//   CallKit/       the call report an app gives CallKit or LiveCommunicationKit, VoIPFramework, and the refusals of
//                  `reportNewIncomingVoIPPushPayload` (VoIPReportError)
//   Result/        ReasonCode: the machine-readable first words of every result's `reason` (docs/result.md)
