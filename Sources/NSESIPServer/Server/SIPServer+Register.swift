import Logging
public import NSESIP
import NSESystem

/// The REGISTER path: the `Registrar` authorizes and stores the bindings, the server answers and hands the
/// `Forwarder` what is held for the AOR; and the bindings kept across a restart.
extension SIPServer {
    /// Number of live bindings of an AOR (`sip:user@host`).
    public func bindingCount(aor: String) -> Int {
        registrar.activeBindings(aor: SIPServer.aorKey(aor)).count
    }

    func handleRegister(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard let to = request.headers.to else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 400)
            return
        }
        let aor = SIPServer.aorKey(to.uri)
        let log = logger.adding([
            "sip.call_id": "\(request.headers.callID ?? "")",
            "sip.method": "REGISTER",
            "sip.aor": "\(aor)",
        ])
        if let denial = registrar.authorize(request, aorURI: to.uri) {
            log.debug("sip server register not authorized", metadata: ["sip.status": "\(denial.status)"])
            respond(
                request, flow: flow, transactionKey: transactionKey, status: denial.status, extraHeaders: denial.headers
            )
            return
        }
        let before = registrar.activeBindings(aor: aor)
        switch registrar.register(request, aor: aor, flow: flow, database: database, logger: log) {
        case .refused(let status, let reason):
            respond(request, flow: flow, transactionKey: transactionKey, status: status, reason: reason)
        case .stored(let changes, let contacts, let deliveryContact):
            for change in changes { emit(change) }
            inheritDeliveries(aor: aor, before: before, logger: log)
            respond(request, flow: flow, transactionKey: transactionKey, status: 200, contacts: contacts)
            guard let deliveryContact else { return }
            deliverHeldCalls(aor: aor, flow: flow, contact: deliveryContact)
            deliverRoomInvitations(aor: aor, flow: flow, contact: deliveryContact)
            // The device that registered, by its binding's key: it gets what was held for it, not its siblings' share.
            let bindings = registrar.activeBindings(aor: aor)
            guard let device = bindings.last(where: { $0.contact.uri == deliveryContact })?.key else { return }
            let sent = forwarder.deliverHeld(
                aor: aor, device: device, flow: flow, contactURI: deliveryContact, faults: faults,
                now: SystemClock.unixSeconds())
            for copy in sent { transmit(copy) }
        }
    }

    /// A binding the registrar replaced because the new one wakes the same app (a reinstall under another
    /// `+sip.instance` that kept its token) hands the messages it is owed to the new one: the phone is the same.
    private func inheritDeliveries(aor: String, before: [Registrar.Binding], logger log: Logger) {
        let after = registrar.activeBindings(aor: aor)
        for old in before where !after.contains(where: { $0.key == old.key }) {
            guard let push = old.push, let heir = after.first(where: { $0.push?.wakesSameApp(as: push) == true })
            else { continue }
            let moved = forwarder.reassign(aor: aor, from: old.key, to: heir.key)
            if moved > 0 {
                log.info("sip server held messages handed to a replacing binding", metadata: ["sip.count": "\(moved)"])
            }
        }
    }

    /// Brings back the stored bindings that have not expired. A UDP binding whose listener port is bound again is
    /// live at once; a TCP/TLS one waits for the device to reconnect (pushes still go out).
    func restoreBindings() throws(SIPServerError) {
        guard let database else { return }
        let wallNow = SystemClock.unixSeconds()
        let (stored, expiredAORs) = try database.liveBindings(now: wallNow)
        let listeners = self.listeners
        let restored = registrar.restore(stored, expiredAORs: expiredAORs, wallNow: wallNow, logger: logger) {
            listeners.udpFlow(localPort: $0.localPort, remoteHost: $0.remoteHost, remotePort: $0.remotePort)
        }
        if restored > 0 { logger.info("sip server restored bindings", metadata: ["sip.count": "\(restored)"]) }
    }

    /// The normalized AOR key of a URI: `sip:user@host` (scheme sip, host lowercased, no port or parameters).
    public static func aorKey(_ uri: SIPURI) -> String {
        let host = ASCII.lowercased(uri.host)
        if let user = uri.user { return "sip:\(user)@\(host)" }
        return "sip:\(host)"
    }

    /// `aorKey` of a URI string (returned unchanged when it does not parse).
    public static func aorKey(_ text: String) -> String {
        (try? SIPURI(parsing: text)).map { aorKey($0) } ?? text
    }
}
