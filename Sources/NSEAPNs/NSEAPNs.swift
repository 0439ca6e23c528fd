// NSEAPNs: APNs's provider side, shared by `nse serve` (which checks tokens), `nse push` and `nse sip-server` (which
// sign them and push). ES256 is jwt-kit's; the APNs rules around it (which claim, which reason, the token's hour and
// the 20 minutes between renewals) are ours and tested reason by reason.
//
// Files:
//   ProviderToken  sign and verify provider tokens; the only file touching jwt-kit
//   APNsPush       one push as a provider sends it to `POST /3/device/{token}`, and APNs's answer, over NSEHTTP
//   HPKEEnvelope   the `hpke1` envelope a provider seals a push's content in for an extension that opens it with
//                  CryptoKit (`nse seal --hpke`): swift-crypto's HPKE, kept out of NSECrypto (the extensions link it)
