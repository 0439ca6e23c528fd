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
    /// The fork server's warm-up (`--extension-launch fork`): one sealed push served by ``main(input:output:)``
    /// over pipes, as the host would send it, for a device made for it in a temporary folder that is removed after.
    /// What stays in the server is what any push builds on first use and never changes: the runtime's type metadata
    /// and protocol conformances, libsodium's CPU probe, the parsers' tables. No device, key or file of it is kept
    /// (the device cache is emptied), and no thread is started: the server forks only while it has one.
    public func rehearse() {
        var template =
            ((Environment.get("TMPDIR") ?? "/tmp") + "/nse-fork-server-XXXXXX").utf8.map {
                CChar(bitPattern: $0)
            } + [0]
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
        // The whole of main(), over pipes this process holds both ends of: the request and the host's
        // `content-accepted` written ahead (a few KB: within a pipe's buffer), the extension's lines read after.
        var toExtension: [Int32] = [-1, -1]
        var fromExtension: [Int32] = [-1, -1]
        guard pipe(&toExtension) == 0 else { return }
        defer { close(toExtension[0]) }
        guard pipe(&fromExtension) == 0 else {
            close(toExtension[1])
            return
        }
        defer { close(fromExtension[0]) }
        let lines = HostMessage.request(request).line + HostMessage.contentAccepted.line
        let written = lines.withUnsafeBytes { write(toExtension[1], $0.baseAddress, $0.count) }
        close(toExtension[1])
        guard written == lines.count else {
            close(fromExtension[1])
            return
        }
        _ = main(input: toExtension[0], output: fromExtension[1])
        close(fromExtension[1])
        var drained = [UInt8](repeating: 0, count: 16 * 1024)
        while drained.withUnsafeMutableBytes({ read(fromExtension[0], $0.baseAddress, $0.count) }) > 0 {}
    }
}
