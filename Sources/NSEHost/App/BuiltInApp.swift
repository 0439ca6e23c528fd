import NSECrypto
import NSEJSON
import NSEPayload

/// The app nse provides when none is configured: it reports every call correctly.
enum BuiltInApp {
    static func report(for payload: JSONObject, through framework: VoIPFramework = .callKit) -> CallReport {
        let aps = payload["aps"]?.objectValue
        let from = payload["from"]?.stringValue ?? payload["from-uri"]?.stringValue ?? ""
        let callID = payload["call-id"]?.stringValue ?? aps?["call-id"]?.stringValue
        var uuid = payload["call_uuid"]?.stringValue ?? ""
        if !Plaintext.isUUIDText(uuid) {
            // CallKit needs a UUID: derive it from the Call-ID so retransmitted pushes map to the same call.
            uuid = Hex.uuid(Digest.sha256((callID ?? from).utf8))
        }
        let type = payload["handle_type"]?.stringValue.flatMap(CallReport.HandleType.init(rawValue:)) ?? .generic
        let name =
            payload["display_name"]?.stringValue ?? payload["display-name"]?.stringValue
            ?? aps?["loc-args"]?.arrayValue?.first?.stringValue
        return CallReport(
            uuid: uuid, handleType: type, handleValue: from.isEmpty ? "unknown" : from,
            localizedCallerName: (name?.isEmpty ?? true) ? nil : name, hasVideo: payload["video"]?.boolValue ?? false,
            framework: framework)
    }
}
