import NSEAPNs
import NSECrypto
import NSEDevice
import NSEJSON
import NSEPayload
import NSESIP
public import NSESystem
import Synchronization

/// `nse sip-server --record DIR`: each push the server sends for a held MESSAGE, written to DIR as a replay case
/// (docs/replay.md, "From the server's side"): the push as sent, and every message the server held for that
/// address, bodies as held, so `nse replay` gives them to the extension again through its embedded server.
///
/// The server does not see the phone: the case states what the server expects of it (the message it pushed for is
/// shown: `rewritten`, with that Call-ID) and cannot name the device's key. Sealed bodies open only once the case's
/// `device.key_file` is set to the phone's key. Plain bodies of messages the push was not for are kept by length
/// only unless `plaintext` (`--record-plaintext`).
public final class ServerCaseRecording: Sendable {
    public let directory: String
    public let plaintext: Bool
    private let written = Mutex(0)

    public init(directory: String, plaintext: Bool = false) throws(SystemError) {
        self.directory = FileSystem.absolute(directory)
        self.plaintext = plaintext
        try FileSystem.createDirectory(self.directory, mode: 0o700)
    }

    /// How many cases this server wrote.
    public var count: Int { written.withLock { $0 } }

    /// Writes the case of one push: `job` for the message `callID` of `aor`, which held `messages` (oldest first),
    /// registered over `transport`.
    func record(_ job: PushSender.Job, held messages: [HeldMessage], transport: String) throws(SystemError) {
        var document = start(job, what: "a held MESSAGE")
        document["sip"] = [
            "transport": .string(transport),
            "held": .array(messages.map { entry(for: $0, pushedFor: $0.callID == job.callID) }),
        ]
        document["expect"] = ["outcome": "rewritten", "info": ["call_id": .string(job.callID)]]
        try write(document)
    }

    /// Writes the case of a held call's first push (PushKit, or the alert carrying a sealed offer): the case's
    /// caller places the same call through the embedded server, and the expectation is that the app reports it.
    func recordCall(_ job: PushSender.Job, invite: SIPRequest, transport: String) throws(SystemError) {
        var document = start(job, what: "a held call")
        let from = invite.headers.from
        let video = String(decoding: invite.body, as: UTF8.self).contains("m=video")
        var call: JSONObject = [
            "call_id": .string(job.callID), "from": .string(from?.uri.description ?? "sip:anonymous@invalid"),
            "video": .bool(video),
        ]
        if let name = from?.displayName, !name.isEmpty { call["display_name"] = .string(name) }
        document["sip"] = ["transport": .string(transport), "call": .object(call)]
        if job.push.pushType == .voip {
            // The app reports the call from the push alone (Flexisip's PushKit payload does not say video), then the
            // call it takes is the one pushed for.
            document["expect"] = ["outcome": "not-invoked", "call": ["call_id": .string(job.callID)]]
        } else {
            // The sealed offer: the extension opens it and hands the call to the app.
            document["expect"] = ["outcome": "suppressed", "reason": "voip-escalated"]
        }
        try write(document)
    }

    /// What every recorded case has: its name, the push as sent, where it came from, the app's bundle.
    private func start(_ job: PushSender.Job, what: String) -> JSONObject {
        let now = SystemClock.unixMilliseconds()
        let time = SystemClock.rfc3339(unixSeconds: now / 1000)
        let sequence = written.withLock { count -> Int in
            count += 1
            return count
        }
        let name = "\(time.filter { $0.isNumber }.prefix(14))-sip-\(sequence)"
        let push = job.push
        var headers: JSONObject = ["apns-push-type": .string(push.pushType.rawValue)]
        if let priority = push.priority { headers["apns-priority"] = .string(String(priority)) }
        if let collapseID = push.collapseID { headers["apns-collapse-id"] = .string(collapseID) }
        if let expiration = push.expiration { headers["apns-expiration"] = .string(String(expiration)) }
        var document: JSONObject = [
            "name": .string(name),
            "description": .string(
                "the \(push.pushType.rawValue) push nse sip-server sent for \(what) at \(time); its sealed "
                    + "content opens once device.key_file names the phone's key"),
            "recorded": [
                "by": "nse sip-server", "at": .string(time), "aor": .string(job.aor), "call_id": .string(job.callID),
                "topic": push.topic.json, "token": .string(push.deviceToken.lowercased()),
            ],
            "push_type": .string(push.pushType.rawValue),
            "headers": .object(headers),
        ]
        if let payload = try? JSON.parse(push.payload), payload.objectValue != nil {
            document["payload"] = payload
        } else {
            document["payload_base64"] = .string(Base64.encode(push.payload))
        }
        if let topic = push.topic {
            let bundle = topic.hasSuffix(".voip") ? String(topic.dropLast(5)) : topic
            document["device"] = ["bundle_id": .string(bundle)]
        }
        return document
    }

    private func write(_ document: JSONObject) throws(SystemError) {
        let name = document["name"]?.stringValue ?? "case"
        let path = Path.join(directory, name + ".json")
        try FileSystem.writeAtomically(path, JSON.object(document).serialized(.pretty) + "\n", mode: 0o600)
    }

    /// A held message as the case's `sip.held` gives it: its sender, Content-Type and body as held; a plain body
    /// the push was not for by its length only (unless `plaintext`).
    func entry(for message: HeldMessage, pushedFor: Bool) -> JSON {
        func header(_ name: String) -> String? {
            message.headers.first { $0.0.lowercased() == name }?.1
        }
        var entry: JSONObject = [
            "call_id": .string(message.callID), "from": .string(Self.address(header("from") ?? "")),
            "content_type": .string(header("content-type") ?? "text/plain"),
        ]
        for (key, value) in RecordedBody.fields(message.body, keepPlain: plaintext || pushedFor) { entry[key] = value }
        return .object(entry)
    }

    /// The URI of a From header (`"Alice" <sip:alice@example.org>;tag=1` → `sip:alice@example.org`), read by NSESIP's
    /// name-address parser; the server accepted the MESSAGE, so its From parses.
    static func address(_ value: String) -> String {
        (try? SIPNameAddress(parsing: value))?.uri.description ?? ""
    }
}
