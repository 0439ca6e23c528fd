import NSECrypto
import NSEDevice
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension ReferenceExtension {
    /// The fork server's warm-up (`--extension-launch fork`): one sealed push, its request line parsed and its
    /// content line made, planned for a device made for it in a temporary folder that is removed after. What stays
    /// in the server is what any push builds on first use and never changes: the runtime's type metadata and
    /// protocol conformances, libsodium's CPU probe, the parsers' tables. No device, key or file of it is kept
    /// (the device cache is emptied), and no thread is started: the server forks only while it has one.
    public func rehearse() {
        var template = Array((Environment.get("TMPDIR") ?? "/tmp") + "/nse-fork-server-XXXXXX").map {
            CChar($0.asciiValue ?? 0x58)
        }
        template.append(0)
        guard let made = mkdtemp(&template) else { return }
        let folder = String(cString: made)
        defer {
            Device.forgetCached()
            try? FileSystem.removeTree(folder)
        }
        let container = Path.join(folder, "device")
        guard let device = try? Device.create(at: container), let key = try? device.publicKey() else { return }
        let message = JSON.object(
            JSONObject([
                ("type", .string("message")), ("from", .string("sip:rehearsal@example.org")),
                ("display_name", .string("Rehearsal")), ("text", .string("rehearsal")),
            ]))
        guard let envelope = try? Envelope.seal(message.serializedBytes(), to: key) else { return }
        let alert = JSONObject([("loc-key", .string("IM_MSG")), ("loc-args", .array([.string("Rehearsal")]))])
        let payload = JSONObject([
            ("aps", .object(JSONObject([("alert", .object(alert)), ("mutable-content", .int(1))]))),
            ("call-id", .string("rehearsal@example.org")), ("enc", .string(envelope.text)),
        ])
        let request = ServiceRequest(
            requestID: "rehearsal", pushType: .alert, payload: payload, container: container,
            budgetMilliseconds: 30_000, deadlineUnixMilliseconds: SystemClock.unixMilliseconds() + 30_000)
        let line = HostMessage.request(request).line
        guard case .request(let decoded)? = try? HostMessage.decode(line: line.dropLast()) else { return }
        if case .deliver(let content) = plan(decoded) { _ = ExtensionMessage.content(content).line }
        _ = ExtensionMessage.hello(ExtensionHello(servesMany: true)).line
        _ = ExtensionMessage.ready.line
        _ = try? HostMessage.decode(line: HostMessage.contentAccepted.line.dropLast())
    }
}
