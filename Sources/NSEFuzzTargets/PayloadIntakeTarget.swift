import NSEJSON
import NSEPayload

/// Strict intake from raw bytes, once per push type (the limits differ: 4096 bytes, 5120 for voip), from stdin
/// and as a simctl `.apns` file.
enum PayloadIntakeTarget {
    static let bundleID = "org.example.app"

    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        for pushType in [PushType.alert, .background, .voip] {
            for source in [PayloadSource.stdin, .file("push.apns")] {
                try check(bytes, pushType: pushType, source: source)
            }
        }
    }

    static func check(_ bytes: [UInt8], pushType: PushType, source: PayloadSource) throws(FuzzFinding) {
        let payload: Payload
        do {
            payload = try Intake.accept(bytes, pushType: pushType, source: source, bundleID: bundleID)
        } catch {
            try FuzzCheck.oneLine(error.description, .payloadIntake, "a rejection")
            return
        }
        guard bytes.count <= pushType.payloadLimit else {
            throw FuzzFinding(.payloadIntake, "a payload over the \(pushType.rawValue) size limit was accepted")
        }
        guard payload.root[Intake.simulatorTargetKey] == nil else {
            throw FuzzFinding(.payloadIntake, "the simctl target key was kept in an accepted payload")
        }
        for warning in payload.warnings { try FuzzCheck.oneLine(warning, .payloadIntake, "a payload warning") }
        // What the host sends the extension is the payload re-serialized: it must parse back to the same document.
        let written = payload.json.serializedBytes()
        let reread: JSON
        do {
            reread = try JSON.parse(
                written, options: JSONParseOptions(maxDepth: Intake.maxDepth + 1, requireObject: true))
        } catch {
            throw FuzzFinding(
                .payloadIntake, "an accepted payload does not re-parse once written (\(error.code.rawValue))")
        }
        guard FuzzCheck.sameDocument(reread, payload.json) else {
            throw FuzzFinding(.payloadIntake, "an accepted payload re-parses to a different document once written")
        }
        // The accessors the extension and the host read must not trap on any accepted document.
        _ = (payload.callID, payload.chatRoomAddress, payload.fromURI, payload.displayName, payload.sendTime)
        _ = (payload.envelope, payload.ttl, payload.instanceUUID, payload.customPayload)
    }
}
