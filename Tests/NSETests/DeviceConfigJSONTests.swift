import NSEDevice
import NSEJSON
import Testing

/// `device.json` as written and read: every setting round-trips, the file keeps its layout, and a member that is
/// not what it should be makes the container corrupt with one line naming the file and the member.
@Suite struct DeviceConfigJSONTests {
    static func config() -> DeviceConfig {
        var config = DeviceConfig(
            bundleID: "org.example.app", teamID: "ABCDE12345", locale: "fr-FR", filtering: true, remoteToken: "aa",
            voipToken: "bb", publicKey: "cHVi", keyID: "k1", createdAt: "2026-11-23T10:00:00Z")
        config.sip = SIPAccount(
            aor: "sip:bob@example.org", proxy: "sip:127.0.0.1:5060;transport=tcp", expires: 600,
            instance: "urn:uuid:1", caFile: "/ca.pem")
        config.voip.appHandler = .url("http://127.0.0.1:9000/voip")
        config.voip.appDeadline = 0.5
        config.voip.maxStrikes = 2
        config.voip.call.action = .decline
        config.voip.call.answerAfter = 0.5
        config.uninstalledAt = 1_795_300_000_000
        return config
    }

    @Test func roundTripsWithItsLayout() throws {
        let config = Self.config()
        let text = config.json.serialized()
        #expect(
            text
                == #"{"format":1,"bundle_id":"org.example.app","team_id":"ABCDE12345","locale":"fr-FR","entitlements":{"com.apple.developer.usernotifications.filtering":true,"com.apple.security.application-groups":[],"keychain-access-groups":[],"com.apple.developer.usernotifications.communication":false,"com.apple.developer.usernotifications.time-sensitive":false,"com.apple.developer.usernotifications.critical-alerts":false},"tokens":{"remote":"aa","voip":"bb"},"public_key":"cHVi","key_id":"k1","created_at":"2026-11-23T10:00:00Z","sip":{"aor":"sip:bob@example.org","proxy":"sip:127.0.0.1:5060;transport=tcp","expires":600,"instance":"urn:uuid:1","ca_file":"/ca.pem"},"voip":{"framework":"CallKit","app_handler":{"url":"http://127.0.0.1:9000/voip"},"app_deadline_s":0.5,"max_strikes":2,"max_offer_age_s":30,"call":{"action":"decline","answer_after_s":0.5,"invite_timeout_s":10,"hangup_after_s":5,"ring_timeout_s":120,"ack_timeout_s":32}},"apns":{"uninstalled_at":1795300000000,"callback_url":null,"online":true,"store":"apple","store_seed":null},"ios_version":"26.1","model":null,"shared_core":{"watchdog_s":30},"senders":{"require_signed":false},"lock_state":"unlocked","show_previews":"when-unlocked"}"#
        )
        #expect(try DeviceConfig(json: JSON.parse(text), path: "device.json") == config)
        for handler in [VoIPSettings.AppHandler.builtIn, .command("./app.sh")] {
            var other = config
            other.voip.appHandler = handler
            other.sip = nil
            #expect(try DeviceConfig(json: JSON.parse(other.json.serialized()), path: "device.json") == other)
        }
    }

    @Test func leftOutSettingsKeepTheirDefaults() throws {
        let config = try DeviceConfig(
            json: JSON.parse(
                #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","sip":null,"voip":{"max_strikes":5}}"#
            ), path: "device.json")
        #expect(!config.filtering && config.sip == nil && config.uninstalledAt == nil && config.callbackURL == nil)
        #expect(config.lockState == .unlocked)
        #expect(config.voip.maxStrikes == 5 && config.voip.appHandler == .builtIn && config.voip.appDeadline == 5)
    }

    @Test(arguments: [
        (#"{"format":9}"#, #"d/device.json: "format" must be 1, the container format this build reads, not 9"#),
        (#"{"format":1,"bundle_id":"b"}"#, #"d/device.json: "team_id" must be a string, and is missing"#),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r"}}"#,
            #"d/device.json: "tokens.voip" must be a string, and is missing"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":"r"}"#,
            #"d/device.json: "tokens" must be an object, not a string"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","voip":{"app_handler":{"cmd":"x"}}}"#,
            #"d/device.json: "voip.app_handler" must be "built-in", or an object with a command or a url"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","sip":{"aor":"a","proxy":"p"}}"#,
            #"d/device.json: "sip.instance" must be a string, and is missing"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","voip":{"call":{"answer_after_s":99}}}"#,
            #"d/device.json: "voip.call.answer_after_s" must be a number of seconds from 0 to 60, not 99"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","lock_state":"asleep"}"#,
            #"d/device.json: "lock_state" must be unlocked, locked or before-first-unlock"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","show_previews":"sometimes"}"#,
            #"d/device.json: "show_previews" must be always, when-unlocked or never"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","voip":{"call":{"action":"maybe"}}}"#,
            #"d/device.json: "voip.call.action" must be answer, decline, busy, ignore or answer-before-invite"#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","voip":{"framework":"Telepathy"}}"#,
            #"d/device.json: "voip.framework" must be "CallKit" or "LiveCommunicationKit""#
        ),
        (
            #"{"format":1,"bundle_id":"b","team_id":"t","locale":"en","tokens":{"remote":"r","voip":"v"},"public_key":"p","key_id":"k","created_at":"c","voip":{"framework":"LiveCommunicationKit"},"ios_version":"16.7"}"#,
            #"d/device.json: "voip.framework" must be a framework of iOS 16.7 (LiveCommunicationKit needs iOS 17.4 or later; the device runs iOS 16.7), not LiveCommunicationKit"#
        ),
    ])
    func corruptMembersAreNamed(document: String, message: String) throws {
        let json = try JSON.parse(document)
        #expect(throws: DeviceError.self) { try DeviceConfig(json: json, path: "d/device.json") }
        do { _ = try DeviceConfig(json: json, path: "d/device.json") } catch {
            #expect(error.code == .corrupt)
            #expect(error.description == message)
        }
    }
}
