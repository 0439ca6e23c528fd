import NSECrypto
import NSEDevice
import NSEHost
public import NSEJSON
import NSEPayload
import NSEProtocol
public import NSESystem
import Synchronization

/// `nse serve --record DIR`: every push that ran is written to DIR as a replay case (docs/replay.md, "From a
/// production push to a CI case"), with the device state it met, the SIP exchange the reference extension had, and
/// its result as `expect`. Switched off and on at run time (`PUT /v1/control/recording`).
///
/// Secrets never land in a case: the provider token is not kept (the request's headers that matter to APNs are),
/// the device's private key is named by its path, the SIP password is not read, credentials in the SIP exchange are
/// redacted by the extension, and sealed content stays sealed. Plain text that the lock screen did not show (a
/// message held for a later push, an unshown body in the exchange) is replaced by its length unless `plaintext`.
public final class CaseRecording: Sendable {
    public let directory: String
    /// `--record-plaintext`: unsafe, for a test device whose messages are not secret.
    public let plaintext: Bool
    private let state: Mutex<State>

    struct State {
        var enabled: Bool
        var written = 0
        var failed = 0
    }

    public init(directory: String, plaintext: Bool = false, enabled: Bool = true) throws(SystemError) {
        self.directory = FileSystem.absolute(directory)
        self.plaintext = plaintext
        state = Mutex(State(enabled: enabled))
        try FileSystem.createDirectory(self.directory, mode: 0o700)
    }

    public var isEnabled: Bool { state.withLock { $0.enabled } }

    public func setEnabled(_ enabled: Bool) { state.withLock { $0.enabled = enabled } }

    /// What `GET /v1/control/recording` answers.
    public var json: JSON {
        state.withLock { state in
            [
                "enabled": .bool(state.enabled), "directory": .string(directory), "plaintext": .bool(plaintext),
                "written": .int(Int64(state.written)), "failed": .int(Int64(state.failed)),
            ]
        }
    }

    /// How the extension records its SIP exchange.
    var sipMode: SIPRecordingMode { plaintext ? .plaintext : .sealed }

    /// The device as the push meets it, read before its extension runs: what it holds changes during the run.
    func snapshot(_ device: Device, payload: [UInt8]) -> DeviceSnapshot {
        var snapshot = DeviceSnapshot(
            config: device.config, directory: device.directory, keyFile: device.secretKeyPath)
        guard let group = try? device.appGroup() else { return snapshot }
        snapshot.strikes = (try? group.voip.strikes()) ?? 0
        snapshot.held = (try? group.messages.held()) ?? []
        if let root = try? JSON.parse(payload).objectValue, let callID = Payload(root: root).callID {
            snapshot.shown = (try? group.messages.shownBy(callID: callID)).flatMap { $0 }.map { (callID, $0) }
        }
        return snapshot
    }

    /// A case written by this server, by name: its file's bytes, or nil.
    func file(named name: String) -> [UInt8]? {
        guard RecordedCase.isName(name) else { return nil }
        return (try? FileSystem.readFile(Path.join(directory, name + ".json"), limit: 1024 * 1024)) ?? nil
    }

    /// Writes one case; a failure is counted and logged by the caller, never fatal to the push.
    func write(_ recordedCase: RecordedCase) throws(SystemError) {
        let path = Path.join(directory, recordedCase.name + ".json")
        do {
            try FileSystem.writeAtomically(path, recordedCase.document.serialized(.pretty) + "\n", mode: 0o600)
            state.withLock { $0.written += 1 }
        } catch {
            state.withLock { $0.failed += 1 }
            throw error
        }
    }
}

/// What a device held and knew when a push met it.
struct DeviceSnapshot: Sendable {
    var config: DeviceConfig
    var directory: String
    var keyFile: String
    var strikes = 0
    /// The App Group store's held messages (bodies as received).
    var held: [StoredMessage] = []
    /// The push's Call-ID, when a process had already shown its message.
    var shown: (callID: String, by: MessageStore.Viewer)?
}
