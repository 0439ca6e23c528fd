public import NSEDevice
public import NSEJSON

/// What the host hands the app's process for a call it reported (one JSON line on its stdin): the device, the
/// Call-ID of the INVITE to take, and the user's plan.
public struct AppCallRequest: Sendable, Equatable, JSONConvertible {
    /// The device directory (the App Group container with the SIP account).
    public var device: String
    /// The SIP Call-ID the push announced.
    public var callID: String
    public var plan: CallSettings

    public init(device: String, callID: String, plan: CallSettings) {
        self.device = device
        self.callID = callID
        self.plan = plan
    }

    public static var jsonKind: String { "an object" }

    public var json: JSON {
        ["device": .string(device), "call_id": .string(callID), "plan": plan.json]
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        device = try object.field("device")
        callID = try object.field("call_id")
        plan = try object.field("plan") ?? CallSettings()
    }
}
