import Foundation
import Logging
import NSECrypto
import NSEDevice
import NSEJSON
import NSEPayload
import NSEProtocol
import NSETestSupport
import Testing

@testable import NSEExtension

/// A device's key rotation (issue #36 §2): the key ring, its files, and which key the reference extension opens
/// an envelope with.
@Suite struct KeyRotationTests {
    func device() throws -> Device {
        try Device.create(at: try TestSupport.temporaryDirectory("nse-keys") + "/bob")
    }

    func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    func sealed(_ text: String, to key: PublicKey) throws -> String {
        let plaintext = #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"\#(text)"}"#
        return try Envelope.seal(Array(plaintext.utf8), to: key).text
    }

    /// What the reference extension makes of a push carrying `envelope`.
    func open(_ envelope: String, on device: Device) -> DeliveredContent? {
        let request = ServiceRequest(
            requestID: "r1", pushType: .alert,
            payload: ["aps": ["alert": ["loc-key": "IM_MSG"], "mutable-content": 1], "enc": .string(envelope)],
            container: device.directory, budgetMilliseconds: 5000, deadlineUnixMilliseconds: 0)
        guard case .deliver(let content) = ReferenceExtension(logger: Logger(label: "test.keys")).plan(request) else {
            return nil
        }
        return content
    }

    @Test func aRotationRetiresTheOldKeyAndPublishesTheNewOne() throws {
        var bob = try device()
        let oldKey = try bob.publicKey()
        let now: Int64 = 1_800_000_000
        let rotation = try bob.rotateKey(grace: 3600, now: now)
        #expect(!rotation.resumed && rotation.dropped.isEmpty)
        #expect(rotation.keyID != oldKey.keyID && rotation.retired?.keyID == oldKey.keyID)
        #expect(rotation.retired?.dropAt == now + 3600 && rotation.retained.map(\.keyID) == [oldKey.keyID])
        // device.json publishes the new key (what nse seal --device and nse send --seal-to read), on disk too.
        let reopened = try Device.open(at: bob.directory)
        #expect(reopened.config.keyID == rotation.keyID && reopened.config.publicKey == rotation.publicKey.base64)
        #expect(try reopened.secretKey().publicKey() == rotation.publicKey)
        // Owner-only files and folder.
        let retiredFile = bob.keyRing.retiredDirectory + "/\(oldKey.keyID).json"
        #expect(try mode(bob.secretKeyPath) == 0o600)
        #expect(try mode(retiredFile) == 0o600)
        #expect(try mode(bob.keyRing.retiredDirectory) == 0o700)
        // The printed line never holds a secret.
        let line = rotation.json(directory: bob.directory, now: now).serialized()
        #expect(!line.contains(try String(contentsOfFile: bob.secretKeyPath, encoding: .utf8).trimmed))
        #expect(!line.contains("secret"))
        // Which key opens what, by time.
        guard case .retired(let secret, _) = try bob.keyRing.key(for: oldKey.keyID, now: now + 3599) else {
            Issue.record("the retired key does not open within its grace period")
            return
        }
        #expect(try secret.publicKey() == oldKey)
        guard case .current = try bob.keyRing.key(for: rotation.keyID, now: now + 10_000) else {
            Issue.record("the new key is not the current one")
            return
        }
        guard case .expired(let expired) = try bob.keyRing.key(for: oldKey.keyID, now: now + 3600) else {
            Issue.record("the retired key still opens once its grace period has ended")
            return
        }
        #expect(expired.retiredAt == now)
        // Meeting it past its grace dropped it: the record stays, the secret is gone.
        let record = try String(contentsOfFile: retiredFile, encoding: .utf8)
        #expect(!record.contains("secret_key") && record.contains("dropped_at"))
        #expect(try mode(retiredFile) == 0o600)
        #expect(try bob.keyRing.retiredKeys().map(\.droppedAt) == [now + 3600])
    }

    @Test func aSecondRotationKeepsEachKeysOwnTimeAndDropsWhatHasEnded() throws {
        var bob = try device()
        let first = try bob.publicKey().keyID
        let now: Int64 = 1_800_000_000
        let one = try bob.rotateKey(grace: 100, now: now)
        let two = try bob.rotateKey(grace: 1000, now: now + 50)
        #expect(two.retained.map(\.keyID) == [first, one.keyID])
        #expect(two.retained.map(\.dropAt) == [now + 100, now + 1050])
        let three = try bob.rotateKey(grace: 0, now: now + 200)
        // The first key's grace ended at now + 100; the one just retired with no grace is dropped at once.
        #expect(Set(three.dropped) == [first, two.keyID])
        #expect(three.retained.map(\.keyID) == [one.keyID])
        #expect(three.retired?.keyID == two.keyID && three.retired?.droppedAt == now + 200)
        #expect(try bob.keyRing.key(for: three.keyID, now: now + 200).isCurrent)
    }

    @Test func anInterruptedRotationIsFinishedNotRepeated() throws {
        var bob = try device()
        let old = bob.config
        let rotation = try bob.rotateKey(grace: 3600, now: 1_800_000_000)
        // As if the process died before device.json was written: the new key is current, the old one published.
        var stale = bob
        stale.config.keyID = old.keyID
        stale.config.publicKey = old.publicKey
        try stale.save()
        #expect(try Device.open(at: bob.directory).keysSummary(now: 1_800_000_001)["problem"] != nil)
        var reopened = try Device.open(at: bob.directory)
        let again = try reopened.rotateKey(grace: 3600, now: 1_800_000_001)
        #expect(again.resumed && again.retired == nil && again.keyID == rotation.keyID)
        #expect(try Device.open(at: bob.directory).config.keyID == rotation.keyID)
        #expect(try Device.open(at: bob.directory).keysSummary(now: 1_800_000_001)["problem"] == nil)
    }

    @Test func badInputAndUnsafeFilesAreRefused() throws {
        var bob = try device()
        #expect(throws: DeviceError.self) { try bob.rotateKey(grace: -1, now: 0) }
        #expect(throws: DeviceError.self) { try bob.rotateKey(grace: Device.maximumKeyGrace + 1, now: 0) }
        #expect(try bob.keyRing.retiredKeys().isEmpty)
        // An id a sender made up never becomes a path.
        for id in ["../private", "../../device", "", String(repeating: "A", count: 12)] {
            guard case .unknown = try bob.keyRing.key(for: id, now: 0) else {
                Issue.record("\(id) was looked up")
                continue
            }
        }
        let rotation = try bob.rotateKey(grace: 3600, now: 1_800_000_000)
        let retiredFile = bob.keyRing.retiredDirectory + "/\(rotation.retired?.keyID ?? "").json"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: retiredFile)
        do {
            try bob.checkKeys()
            Issue.record("a retired key that others can read was accepted")
        } catch {
            #expect(error.code == .insecureKey && error.description.contains("644"))
        }
    }

    @Test func theExtensionSaysWhichKeyOpenedAMessage() throws {
        var bob = try device()
        let old = try bob.publicKey()
        let beforeRotation = try sealed("sealed to the old key", to: old)
        #expect(open(beforeRotation, on: bob)?.info?["key"] == "current")
        #expect(open(beforeRotation, on: bob)?.info?["key_id"] == .string(old.keyID))
        let now = Int64(Date().timeIntervalSince1970)
        let rotation = try bob.rotateKey(grace: 3600, now: now)
        let late = try #require(open(beforeRotation, on: bob))
        #expect(!late.isFallback && late.reason?.hasPrefix("decrypted") == true, "\(late.reason ?? "")")
        #expect(late.info?["key_id"] == .string(old.keyID) && late.info?["key"] == "retired")
        let fresh = try #require(open(try sealed("sealed to the new key", to: rotation.publicKey), on: bob))
        #expect(fresh.info?["key_id"] == .string(rotation.keyID) && fresh.info?["key"] == "current")
        // A key retired an hour ago with a grace of half an hour opens nothing, and is dropped when met.
        var carol = try device()
        let carolOld = try carol.publicKey()
        let toCarol = try sealed("too late", to: carolOld)
        _ = try carol.rotateKey(grace: 1800, now: now - 3600)
        let refused = try #require(open(toCarol, on: carol))
        #expect(refused.isFallback && refused.info?["key_id"] == nil)
        let reason = refused.reason ?? ""
        #expect(reason.hasPrefix("envelope-wrong-key: ") && reason.contains("grace period ended"), "\(reason)")
        #expect(reason.contains(carolOld.keyID))
        let record = try String(
            contentsOfFile: carol.keyRing.retiredDirectory + "/\(carolOld.keyID).json", encoding: .utf8)
        #expect(!record.contains("secret_key"))
        // A key the device never had: the usual wrong-key reason.
        let stranger = try KeyPair.generate().publicKey
        let unknown = try #require(open(try sealed("not for bob", to: stranger), on: bob))
        #expect(
            unknown.isFallback && unknown.reason?.hasPrefix("envelope-wrong-key: the envelope is sealed to key") == true
        )
    }
}

extension KeyRing.Lookup {
    fileprivate var isCurrent: Bool {
        if case .current = self { return true }
        return false
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
