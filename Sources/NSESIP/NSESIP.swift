// NSESIP: a small SIP user agent on SwiftNIO (RFC 3261 non-INVITE subset, RFC 2617/7616/8760 digest,
// RFC 3581 rport, RFC 8599 push parameters). Imports only Glibc, NIOCore, NIOPosix, NIOSSL, Logging, NSECrypto
// (SHA-256 from libsodium, hex) and the Swift runtime's global-executor hook.
//
// Folders:
//   Errors/       SIPError (one error type, one-line descriptions, never message bodies)
//   Message/      SIPRequest, SIPResponse, SIPMessage (serializer), SIPHeaders, SIPURI, SIPNameAddress, SIPVia, SIPCSeq
//   Parser/       SIPParser (strings and UDP datagrams), SIPMessageDecoder / SIPMessageEncoder (TCP/TLS streams), limits
//   Auth/         MD5 (pure Swift, why in MD5.swift), DigestChallenge, DigestCredentials, DigestVerifier (server side)
//   Transport/    SIPTransport (UDP/TCP/TLS client connection), SIPEndpoint, SIPTransportKind, SIPTLSOptions,
//                 SIPTrace (what a connection sent and received, for a recorded replay case)
//   Transaction/  SIPTransactionLayer (client timers E/F, server retransmission absorption), SIPServerTransactionTable
//   UserAgent/    SIPUserAgent (register, sendMessage, incoming MESSAGE stream, close; SUBSCRIBE/REFER and the
//                 NOTIFYs of its subscriptions in `+Requests`)
//   Runtime/      EventLoopGlobalExecutor (every task of a process on its one event-loop thread: the extension's and
//                 `nse sip-server`'s)
//   Conference/   chat rooms: SIPResourceList (RFC 4826/5366), SIPConferenceInfo (RFC 4575) over a strict, bounded
//                 SIPXMLElement reader; SIPRoomClient (create, subject, add/remove, state, as liblinphone does)
//
// Typical notification-extension flow:
//
//   let ua = SIPUserAgent(logger: logger)                       // owns a 1-thread event loop group
//   let reg = try await ua.register(aor: aor, password: pw, proxy: proxy, expires: 600,
//                                   contactURIParameters: [SIPParameter("pn-provider", "apns"), ...],
//                                   contactHeaderParameters: [SIPParameter("+sip.instance", "\"<urn:uuid:...>\"")])
//   for await message in ua.messages { ... break }              // race with a timeout task
//   _ = try await ua.sendMessage(to: ..., from: aor, proxy: proxy, contentType: "message/imdn+xml", body: ...)
//   await ua.close()
