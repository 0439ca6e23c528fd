import NSECrypto
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSESystem

/// One push as a replay case file (docs/replay.md, "From a production push to a CI case"): the request as
/// received, the device state it met, the SIP exchange its extension had, and its result as `expect`.
struct RecordedCase {
    var name: String
    var document: JSON

    /// The case's name and file name (`.json` added): when the push came, then its `apns-id`'s first 8 characters.
    static func name(for push: RecordedPush) -> String {
        let stamp = SystemClock.rfc3339(unixSeconds: push.record.receivedAt / 1000).filter { $0.isNumber }.prefix(14)
        let id = push.record.push.apnsID.lowercased().filter { $0.isHexDigit }.prefix(8)
        return "\(stamp)-\(id)"
    }

    /// Whether a name is one `name(for:)` makes: what `GET /v1/cases/{name}` serves, nothing else.
    static func isName(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0].count == 14 && parts[0].allSatisfy(\.isNumber)
            && (1...8).contains(parts[1].count) && parts[1].allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    /// The result's extension `info.sip_exchange`, moved out of the result: it belongs to the case, not to the
    /// result every reader gets.
    static func takeExchange(from result: inout JSONObject) -> JSON? {
        guard case .object(var report)? = result["extension"], case .object(var info)? = report["info"],
            let exchange = info["sip_exchange"]
        else { return nil }
        info["sip_exchange"] = nil
        report["info"] = .object(info)
        result["extension"] = .object(report)
        return exchange
    }

    init(
        push: RecordedPush, snapshot: DeviceSnapshot, exchange: JSON?, result: JSON, limits: ExtensionLimits,
        plaintext: Bool
    ) {
        let accepted = push.record.push
        let time = SystemClock.rfc3339(unixSeconds: push.record.receivedAt / 1000)
        name = Self.name(for: push)
        var object: JSONObject = [
            "name": .string(name),
            "description": .string(
                "\(accepted.pushType.rawValue) push recorded by nse serve at \(time)"
                    + (exchange == nil ? "" : ", with its extension's SIP exchange")),
        ]
        var recorded: JSONObject = [
            "by": "nse serve", "at": .string(time), "apns_id": .string(accepted.apnsID),
            "token": .string(accepted.token.lowercased()), "device": .string(snapshot.directory),
        ]
        switch push.late {
        case .heldOffline?: recorded["held_offline"] = true
        case .restarted?: recorded["redelivered"] = true
        case .burst?: recorded["delivered_in_burst"] = true
        case nil: break
        }
        object["recorded"] = .object(recorded)
        object["push_type"] = .string(accepted.pushType.rawValue)
        var headers: JSONObject = [
            "apns-push-type": .string(accepted.pushType.rawValue), "apns-priority": .string(String(accepted.priority)),
        ]
        if let collapseID = accepted.collapseID { headers["apns-collapse-id"] = .string(collapseID) }
        if let expiration = accepted.expiration { headers["apns-expiration"] = .string(String(expiration)) }
        object["headers"] = .object(headers)
        if let payload = try? JSON.parse(accepted.payload), payload.objectValue != nil {
            object["payload"] = payload
        } else {
            object["payload_base64"] = .string(Base64.encode(accepted.payload))
        }
        object["budget"] = .double(limits.budget)
        object["grace"] = .double(limits.grace)
        if !limits.memoryLimitFollowsDevice {
            object["memory_limit"] = .double(Double(limits.memoryLimitKilobytes) / 1024)
        }
        object["device"] = .object(Self.device(snapshot))
        var group: JSONObject = [:]
        if !snapshot.held.isEmpty {
            group["held"] = .array(snapshot.held.map { Self.message($0, plaintext: plaintext) })
        }
        if let shown = snapshot.shown {
            group["shown"] = .array([["call_id": .string(shown.callID), "by": .string(shown.by.rawValue)]])
        }
        if !group.isEmpty { object["app_group"] = .object(group) }
        if let exchange { object["sip"] = ["script": exchange] }
        object["expect"] = .object(Self.expectation(result))
        document = .object(object)
    }

    /// The device fields a replay needs to meet the push as this device did; its key by reference.
    static func device(_ snapshot: DeviceSnapshot) -> JSONObject {
        let config = snapshot.config
        var device: JSONObject = [
            "bundle_id": .string(config.bundleID), "team_id": .string(config.teamID), "locale": .string(config.locale),
            "ios_version": config.iosVersion.json, "key_file": .string(snapshot.keyFile),
            "entitlements": [
                "app_groups": .array(config.appGroups.map { .string($0) }),
                "keychain_access_groups": .array(config.keychainAccessGroups.map { .string($0) }),
                "filtering": .bool(config.filtering),
                "communication": .bool(config.communication), "time_sensitive": .bool(config.timeSensitive),
                "critical_alerts": .bool(config.criticalAlerts),
            ],
        ]
        if let model = config.model { device["model"] = model.json }
        if snapshot.strikes > 0 { device["strikes"] = .int(Int64(snapshot.strikes)) }
        if config.requireSignedSender { device["require_signed_sender"] = true }
        device["voip_framework"] = config.voip.framework.json
        // The keychain's items are secrets and stay out; the lock that decides which of them the extension read
        // does not.
        if config.lockState != .unlocked { device["lock_state"] = config.lockState.json }
        if config.showPreviews != .whenUnlocked { device["show_previews"] = config.showPreviews.json }
        return device
    }

    /// A held message as the case keeps it: a sealed body as it is; a plain one by its length, unless `plaintext`.
    static func message(_ message: StoredMessage, plaintext: Bool) -> JSON {
        var entry: JSONObject = [
            "call_id": .string(message.callID), "from": .string(message.from), "to": .string(message.to),
            "content_type": .string(message.contentType),
        ]
        for (key, value) in RecordedBody.fields(message.body, keepPlain: plaintext) { entry[key] = value }
        return .object(entry)
    }

    /// What the replay must give again: the verdict and what the lock screen showed, not what varies by run.
    static func expectation(_ result: JSON) -> JSONObject {
        var expect: JSONObject = ["outcome": result["outcome"] ?? .null]
        if let reason = result["reason"]?.stringValue, let code = reason.split(separator: ":").first {
            expect["reason"] = .string(String(code))
        }
        if let display = result["display"], !display.isNull { expect["display"] = display }
        if let report = result["call_report"] {
            if let fields = report.objectValue {
                var subset: JSONObject = [:]
                for key in ["has_video", "localized_caller_name"] { if let value = fields[key] { subset[key] = value } }
                expect["call_report"] = .object(subset)
            } else {
                expect["call_report"] = .null
            }
        }
        return expect
    }
}
