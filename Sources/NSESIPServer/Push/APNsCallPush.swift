import NSECrypto
import NSEJSON

/// Builds the parts of Flexisip-shaped APNs pushes for calls that differ from a MESSAGE's.
public enum APNsCallPush {
    /// The JSON payload Flexisip sends as a PushKit (`apns-push-type: voip`) push for an INVITE: the alert fields
    /// and the Call-ID inside `aps`, no `mutable-content` (PushKit wakes the app, not the extension).
    public static func voipPayload(
        callID: String, fromURI: String, displayName: String, privacy: Bool, instanceID: String, ttl: Int,
        sendTime: String, locKey: String = "IC_MSG"
    ) -> [UInt8] {
        let locArg = privacy ? "" : (displayName.isEmpty ? fromURI : displayName)
        let json: JSON = [
            "aps": [
                "sound": "",
                "loc-key": .string(locKey),
                "loc-args": [.string(locArg)],
                "call-id": .string(callID),
                "uuid": .string(instanceID),
                "send-time": .string(sendTime),
            ],
            "from-uri": .string(privacy ? "" : fromURI),
            "display-name": .string(privacy ? "" : displayName),
            "pn_ttl": .int(Int64(ttl)),
            "customPayload": [:],
        ]
        return json.serializedBytes()
    }

    /// The alert payload of the end-to-end-encrypted route: the message template's fields with the sealed call
    /// offer as `enc` and `mutable-content: 1`, so that the device's extension opens it and escalates the call
    /// (`reportNewIncomingVoIPPushPayload`); the loc-key text is what shows when it cannot.
    public static func sealedPayload(
        callID: String, sealedOffer: String, fromURI: String, displayName: String, privacy: Bool, instanceID: String,
        ttl: Int, sendTime: String, locKey: String = "IC_MSG", sound: String = "empty"
    ) -> [UInt8] {
        let locArg = privacy ? "" : (displayName.isEmpty ? fromURI : displayName)
        let json: JSON = [
            "aps": [
                "alert": [
                    "loc-key": .string(locKey),
                    "loc-args": [.string(locArg)],
                ],
                "sound": .string(sound),
                "mutable-content": 1,
            ],
            "from-uri": .string(privacy ? "" : fromURI),
            "display-name": .string(privacy ? "" : displayName),
            "call-id": .string(callID),
            "enc": .string(sealedOffer),
            "pn_ttl": .int(Int64(ttl)),
            "uuid": .string(instanceID),
            "send-time": .string(sendTime),
            "customPayload": [:],
        ]
        return json.serializedBytes()
    }

    /// `apns-collapse-id` for a call: its Call-ID, or, for one over APNs's 64-byte limit, the first 64 hex digits
    /// of its SHA-256 (the same for every push of the call, so a later notice still replaces the first).
    public static func collapseID(callID: String) -> String {
        if callID.utf8.count <= 64 { return callID }
        return String(Hex.encode(Digest.sha256(callID.utf8)).prefix(64))
    }
}
