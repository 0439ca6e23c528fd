import NSECrypto
import NSEJSON
import NSEPayload

/// The app nse provides when none is configured: it reports every call correctly.
enum BuiltInApp {
    static func report(for payload: JSONObject) -> CallReport {
        let aps = payload["aps"]?.objectValue
        let from = payload["from"]?.stringValue ?? payload["from-uri"]?.stringValue ?? ""
        let callID = payload["call-id"]?.stringValue ?? aps?["call-id"]?.stringValue
        var uuid = payload["call_uuid"]?.stringValue ?? ""
        if !Plaintext.isUUIDText(uuid) {
            // CallKit needs a UUID: derive it from the Call-ID so retransmitted pushes map to the same call.
            let seed = Array((callID ?? from).utf8)
            var bytes = Array(((try? Digest.sha256(seed)) ?? Array(repeating: 0, count: 32)).prefix(16))
            bytes[6] = (bytes[6] & 0x0F) | 0x40
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            let hex = Array(Hex.encode(bytes).uppercased())
            uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
        }
        let type = payload["handle_type"]?.stringValue.flatMap(CallReport.HandleType.init(rawValue:)) ?? .generic
        let name = payload["display_name"]?.stringValue ?? payload["display-name"]?.stringValue
            ?? aps?["loc-args"]?.arrayValue?.first?.stringValue
        return CallReport(
            uuid: uuid, handleType: type, handleValue: from.isEmpty ? "unknown" : from,
            localizedCallerName: (name?.isEmpty ?? true) ? nil : name, hasVideo: payload["video"]?.boolValue ?? false)
    }
}
