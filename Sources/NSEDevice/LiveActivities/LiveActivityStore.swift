import NSEJSON
import NSESystem

/// A device's Live Activity state on disk: `DIR/live-activities.json` (mode 0600, replaced atomically as
/// `device.json` is), changed under an advisory lock (`DIR/locks/live-activities.lock`) so `nse device activity` and
/// `nse serve`'s delivery threads never lose each other's change. Absent until the app first uses ActivityKit.
public struct LiveActivityStore: Sendable {
    /// The file's name in the container.
    public static let fileName = "live-activities.json"

    public let path: String
    let lockPath: String

    init(containerDirectory: String) {
        path = Path.join(containerDirectory, Self.fileName)
        lockPath = Path.join(containerDirectory, "locks", "live-activities.lock")
    }

    /// The state as last written (empty when the app never used ActivityKit).
    public func read() throws(DeviceError) -> LiveActivityState {
        try Self.read(path: path)
    }

    /// The state in the file at `path`, read without the lock: the file is only ever replaced whole.
    public static func read(path: String) throws(DeviceError) -> LiveActivityState {
        guard FileSystem.exists(path) else { return LiveActivityState() }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(path, limit: 4 * 1024 * 1024) } catch {
            throw DeviceError(.unreadable, error.description)
        }
        guard let bytes else { throw DeviceError(.corrupt, "\(path) is larger than 4 MiB") }
        do { return try LiveActivityState(json: try JSON.parse(bytes)) } catch let error as JSONError {
            throw DeviceError(.corrupt, "\(path): \(error.description)")
        } catch let error as JSONFieldError {
            throw DeviceError(.corrupt, "\(path): \(error.description)")
        } catch {
            throw DeviceError(.corrupt, "\(path): \(error)")
        }
    }

    /// Reads the state, lets `body` change it, and writes it back (synced before this returns) when it changed; under
    /// the lock throughout, so a change made by another process or thread meanwhile is never overwritten.
    public func update<T>(_ body: (inout LiveActivityState) throws(DeviceError) -> T) throws(DeviceError) -> T {
        try DeviceFileLock.withLock(lockPath) { () throws(DeviceError) -> T in
            var state = try read()
            let before = state
            let value = try body(&state)
            if state != before {
                do throws(SystemError) {
                    try FileSystem.writeAtomically(path, state.json.serialized(.pretty) + "\n", mode: 0o600)
                } catch {
                    throw DeviceError(.io, error.description)
                }
            }
            return value
        }
    }
}

extension Device {
    /// The app's ActivityKit state: its Live Activities and push-to-start tokens.
    public var liveActivities: LiveActivityStore { LiveActivityStore(containerDirectory: directory) }
}
