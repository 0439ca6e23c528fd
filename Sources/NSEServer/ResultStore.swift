public import NSEDevice
public import NSEJSON
public import NSESystem
import Synchronization

/// Where delivered results live: one JSON line each in the device container's `notifications/results.jsonl`.
/// Appends are serialized, so lines never interleave; a result is on disk before its push counts as done.
public final class ResultStore: Sendable {
    private let lock = Mutex<Void>(())

    public init() {}

    /// `DIR/notifications/results.jsonl`.
    public static func path(for device: Device) -> String {
        Path.join(device.directory, "notifications", "results.jsonl")
    }

    /// Appends one result line (creating the folder).
    public func append(_ result: JSON, for device: Device) throws(SystemError) {
        let path = Self.path(for: device)
        let line = result.serializedBytes() + [0x0A]
        let outcome = lock.withLock { _ -> SystemError? in
            do throws(SystemError) {
                try FileSystem.createDirectory(Path.dirname(path))
                try FileSystem.append(path, line)
                return nil
            } catch {
                return error
            }
        }
        if let outcome { throw outcome }
    }

    /// The recorded results, newest first, at most `limit`.
    public func results(for device: Device, limit: Int) -> [JSON] {
        let text: String? = lock.withLock { _ in (try? FileSystem.readText(Self.path(for: device), limit: 256 * 1024 * 1024)) ?? nil }
        guard let text else { return [] }
        var results: [JSON] = []
        for line in text.split(separator: "\n").reversed() where results.count < limit {
            if let json = try? JSON.parse(String(line)) { results.append(json) }
        }
        return results
    }
}
