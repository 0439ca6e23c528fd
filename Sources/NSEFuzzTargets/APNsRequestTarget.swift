import NSEAPNsServer
import NSEDevice
import NSEPayload
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// A `POST` to `nse serve` built from the bytes, validated as `PushResponder` does:
/// ```
/// <path>\n
/// <name>: <value>\n      (headers, names lowercased; `authorization: <team>` stands for a verified provider token)
/// \n
/// <body>                 (over 5120 bytes: as if collecting it failed, nil)
/// ```
/// Two devices answer: ``remoteToken``/``voipToken`` (installed) and ``uninstalledToken``.
enum APNsRequestTarget {
    static let remoteToken = String(repeating: "ab", count: 32)
    static let voipToken = String(repeating: "cd", count: 32)
    static let uninstalledToken = String(repeating: "ef", count: 32)
    static let newID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    /// `PushResponder.maxBody`: the largest body it reads.
    static let maxBody = PushType.voip.payloadLimit
    static let reasons: Set<String> = [
        "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPath", "BadPriority", "BadTopic",
        "DeviceTokenNotForTopic", "DuplicateHeaders", "InvalidPushType", "MethodNotAllowed", "MissingDeviceToken",
        "MissingTopic", "PayloadEmpty", "PayloadTooLarge", "TopicDisallowed", "Unregistered",
    ]

    /// The devices, made once in a temporary folder that is removed again at once (validation reads no files).
    static let devices: [Device] = {
        let folder = "/tmp/nse-fuzz-devices-\(getpid())"
        defer { removeTree(folder) }
        do {
            var installed = try Device.create(at: Path.join(folder, "installed"))
            installed.config.remoteToken = remoteToken
            installed.config.voipToken = voipToken
            var uninstalled = try Device.create(at: Path.join(folder, "uninstalled"))
            uninstalled.config.remoteToken = uninstalledToken
            uninstalled.config.voipToken = String(repeating: "01", count: 32)
            uninstalled.config.uninstalledAt = 1_700_000_000_000
            return [installed, uninstalled]
        } catch {
            fatalError("cannot create the fuzz devices in \(folder): \(error)")
        }
    }()

    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        var lines = bytes.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(decoding: lines.removeFirst(), as: UTF8.self)
        var rest = lines.first ?? []
        var headers: APNsHeaders = []
        while !rest.isEmpty, headers.count < 64 {
            let end = rest.firstIndex(of: 0x0A) ?? rest.endIndex
            let line = rest[rest.startIndex..<end]
            rest = end < rest.endIndex ? rest[(end + 1)...] : []
            if line.isEmpty { break }
            let text = String(decoding: line, as: UTF8.self)
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count == 2 ? String(parts[1].drop(while: { $0 == " " })) : ""
            headers.append((name: parts[0].lowercased(), value: value))
        }
        let body: [UInt8]? = rest.count > maxBody ? nil : Array(rest)

        // The route, as PushResponder splits it.
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts.count <= 4, parts[0] == "", parts[1] == "3", parts[2] == "device" else { return }
        let token = parts.count == 4 ? parts[3] : ""
        let teamID = headers.first(where: { $0.name == "authorization" })?.value

        let verdict = APNsValidation.validate(
            token: token, headers: headers, body: body,
            device: { token in devices.first { $0.ownsToken(token) } }, newID: { newID }, teamID: teamID)
        switch verdict {
        case .failure(let error):
            guard reasons.contains(error.reason), [400, 404, 405, 410, 413].contains(error.status) else {
                throw FuzzFinding(.apnsRequest, "a refusal has a status or reason APNs does not use")
            }
        case .success(let (push, device)):
            try check(push, device: device, body: body)
        }
    }

    static func check(_ push: AcceptedPush, device: Device, body: [UInt8]?) throws(FuzzFinding) {
        guard device.config.uninstalledAt == nil else {
            throw FuzzFinding(.apnsRequest, "a push to an uninstalled app was accepted")
        }
        guard device.ownsToken(push.token) else {
            throw FuzzFinding(.apnsRequest, "a push was accepted for a device that does not own its token")
        }
        guard APNsValidation.isUUID(push.apnsID) else {
            throw FuzzFinding(.apnsRequest, "an accepted push has an apns-id that is not a UUID")
        }
        guard let body, push.payload == body, !body.isEmpty, body.count <= push.pushType.payloadLimit else {
            throw FuzzFinding(.apnsRequest, "an accepted push's payload is missing, empty, changed or over its limit")
        }
        guard [10, 5, 1].contains(push.priority), push.pushType != .background || push.priority == 5 else {
            throw FuzzFinding(.apnsRequest, "an accepted push has a priority APNs refuses")
        }
        guard (push.pushType == .voip) == (push.tokenKind == .voip) else {
            throw FuzzFinding(.apnsRequest, "an accepted push went to the wrong kind of token")
        }
        if let collapse = push.collapseID, collapse.utf8.count > APNsValidation.maxCollapseIDBytes {
            throw FuzzFinding(.apnsRequest, "an accepted push has a collapse id over 64 bytes")
        }
    }

    /// Removes a folder and everything in it (best effort: the folder is this process's own scratch).
    static func removeTree(_ path: String) {
        if FileSystem.isDirectory(path) {
            for name in (try? FileSystem.contents(ofDirectory: path)) ?? [] { removeTree(Path.join(path, name)) }
            rmdir(path)
        } else {
            try? FileSystem.remove(path)
        }
    }
}
