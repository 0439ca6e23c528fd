import Foundation
import Synchronization

/// The temporary folders the tests made, removed when the test process exits: a run of the suite makes hundreds
/// (device containers, App Group stores, servers' result databases), and without this they stay in `/tmp` run after
/// run. `NSE_KEEP_TEST_DIRS=1` keeps them.
enum TemporaryFolders {
    private static let made = Mutex<[String]>([])
    private static let removalInstalled = Mutex(false)

    static func remember(_ path: String) {
        made.withLock { $0.append(path) }
        let install = removalInstalled.withLock { installed in
            defer { installed = true }
            return !installed
        }
        if install, ProcessInfo.processInfo.environment["NSE_KEEP_TEST_DIRS"] == nil {
            atexit { TemporaryFolders.removeAll() }
        }
    }

    private static func removeAll() {
        for path in made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
