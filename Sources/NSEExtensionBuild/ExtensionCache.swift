import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The built extensions in the cache (`<cache>/extensions/<hash>/`): every change to a tree, the SDK or nse makes a
/// new one of ~70 MB, so the least recently used go once there are more than ``limit``, as ccache keeps its cache
/// within a size. A build found or made is stamped as just used, and none this process found or made goes (`nse
/// replay` builds every case's extension before it runs them); a staging folder left by a build that did not finish
/// goes once it is an hour old.
struct ExtensionCache: Sendable {
    /// The builds this process found or made.
    private static let usedHere = Mutex<Set<String>>([])

    /// Builds kept by default: ~4.5 GB.
    static let defaultLimit = 64
    /// The variable that sets the limit (0: every build is kept).
    static let limitVariable = "NSE_CACHE_EXTENSIONS"
    /// A staging folder this old belongs to a build that ended without finishing.
    static let abandonedNanoseconds: Int64 = 3_600 * 1_000_000_000

    /// `<cache>/extensions`.
    let directory: String
    /// At most this many builds are kept; 0: all.
    let limit: Int

    /// The limit `NSE_CACHE_EXTENSIONS` sets, else ``defaultLimit``.
    static func limit(from value: String?) throws(ExtensionBuildError) -> Int {
        guard let value else { return defaultLimit }
        guard let limit = Int(value), limit >= 0 else {
            throw ExtensionBuildError(
                .usage, "\(limitVariable) must be a number of builds to keep (0: every one), not \(value)")
        }
        return limit
    }

    /// `folder` (a build's) is now the most recently used.
    func used(_ folder: String) {
        _ = utimensat(AT_FDCWD, folder, nil, 0)
        Self.usedHere.withLock { _ = $0.insert(folder) }
    }

    /// Removes the least recently used builds past ``limit``, and abandoned staging folders; what cannot be removed
    /// stays (another user's, a read-only cache) and the build goes on.
    func prune(now: Int64 = SystemClock.unixNanoseconds()) {
        guard let names = try? FileSystem.contents(ofDirectory: directory) else { return }
        var builds: [(path: String, used: Int64)] = []
        for name in names {
            let path = Path.join(directory, name)
            guard let stamp = FileSystem.stamp(path) else { continue }
            if name.contains(".building-") {
                if now - stamp.modified > Self.abandonedNanoseconds { try? FileSystem.removeTree(path) }
            } else {
                builds.append((path, stamp.modified))
            }
        }
        guard limit > 0, builds.count > limit else { return }
        let kept = Self.usedHere.withLock { $0 }
        for build in builds.sorted(by: { $0.used > $1.used }).dropFirst(limit) where !kept.contains(build.path) {
            try? FileSystem.removeTree(build.path)
        }
    }
}
