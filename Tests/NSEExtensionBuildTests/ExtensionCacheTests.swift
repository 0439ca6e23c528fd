import Foundation
import Testing

@testable import NSEExtensionBuild

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ExtensionCacheTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "nse-extension-cache-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A folder in the cache last changed `secondsAgo` before `now`.
    private func folder(_ name: String, secondsAgo: Int, now: Int64) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let then = timespec(tv_sec: Int(now / 1_000_000_000) - secondsAgo, tv_nsec: 0)
        let times = [then, then]
        #expect(utimensat(AT_FDCWD, path, times, 0) == 0)
        return path
    }

    private func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// Past its limit the cache keeps the most recently used builds; one just found is stamped as used; a staging
    /// folder goes only once it is an hour old; 0 keeps every build.
    @Test func theLeastRecentlyUsedBuildsGoPastTheLimit() throws {
        let now = Int64(Date().timeIntervalSince1970) * 1_000_000_000
        for (name, age) in [("a", 500), ("b", 400), ("c", 300), ("d", 200)] {
            _ = try folder(name, secondsAgo: age, now: now)
        }
        _ = try folder("e.building-1", secondsAgo: 7200, now: now)
        _ = try folder("f.building-2", secondsAgo: 60, now: now)
        // 0 keeps every build; what a build left unfinished two hours ago is no build.
        ExtensionCache(directory: directory, limit: 0).prune(now: now)
        #expect(try names() == ["a", "b", "c", "d", "f.building-2"])

        // "a", the oldest, is found again: now the newest.
        let cache = ExtensionCache(directory: directory, limit: 2)
        cache.used(directory + "/a")
        cache.prune(now: Int64(Date().timeIntervalSince1970) * 1_000_000_000)
        #expect(try names() == ["a", "d", "f.building-2"])
    }

    /// What this process found or made stays, past the limit (`nse replay` builds every case's extension first).
    @Test func aBuildThisProcessUsedStays() throws {
        let now = Int64(Date().timeIntervalSince1970) * 1_000_000_000
        let old = try folder("old", secondsAgo: 900, now: now)
        let cache = ExtensionCache(directory: directory, limit: 1)
        cache.used(old)
        #expect(utimensat(AT_FDCWD, old, [timespec(tv_sec: 1, tv_nsec: 0), timespec(tv_sec: 1, tv_nsec: 0)], 0) == 0)
        _ = try folder("new", secondsAgo: 10, now: now)
        cache.prune(now: now)
        #expect(try names() == ["new", "old"])
    }

    @Test func theLimitIsANumberOfBuilds() throws {
        #expect(try ExtensionCache.limit(from: nil) == ExtensionCache.defaultLimit)
        #expect(try ExtensionCache.limit(from: "0") == 0 && ExtensionCache.limit(from: "3") == 3)
        for bad in ["-1", "many", "1.5", ""] {
            #expect(throws: ExtensionBuildError.self) { try ExtensionCache.limit(from: bad) }
        }
    }
}
