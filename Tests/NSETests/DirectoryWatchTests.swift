import Foundation
import NSESystem
import Testing

@Suite struct DirectoryWatchTests {
    /// Two fresh folders under a temporary one, removed after `body`.
    private func withFolders(_ body: (String, String) throws -> Void) throws {
        let root = NSTemporaryDirectory() + "nse-watch-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileSystem.createDirectory(root + "/a", mode: 0o700, parentMode: 0o700)
        try FileSystem.createDirectory(root + "/b", mode: 0o700, parentMode: 0o700)
        try body(root + "/a", root + "/b")
    }

    @Test func reportsTheFolderWhoseFileWasReplacedWrittenOrRemoved() throws {
        try withFolders { a, b in
            let watch = DirectoryWatch(fileName: "live-activities.json")
            #expect(watch.watch(a) && watch.watch(b))
            #expect(watch.changes() == DirectoryWatch.Changes(), "nothing changed yet")
            // Replaced as the stores replace it (a temporary file renamed over it).
            try FileSystem.writeAtomically(a + "/live-activities.json", "{}\n")
            #expect(watch.changes().directories == [a])
            #expect(watch.changes().directories.isEmpty, "each change is told once")
            // Written in place, then removed.
            try FileSystem.append(b + "/live-activities.json", Array("{}".utf8))
            #expect(watch.changes().directories == [b])
            try FileManager.default.removeItem(atPath: b + "/live-activities.json")
            #expect(watch.changes().directories == [b])
        }
    }

    @Test func otherFilesAndUnwatchedFoldersAreNotReported() throws {
        try withFolders { a, b in
            let watch = DirectoryWatch(fileName: "live-activities.json")
            #expect(watch.watch(a) && watch.watch(b))
            try FileSystem.writeAtomically(a + "/device.json", "{}\n")
            try FileSystem.writeAtomically(a + "/live-activities.json.bak", "{}\n")
            try FileSystem.writeAtomically(a + "/live-activities", "{}\n")
            #expect(watch.changes().directories.isEmpty)
            watch.unwatch(b)
            #expect(!watch.isWatching(b) && watch.isWatching(a))
            try FileSystem.writeAtomically(b + "/live-activities.json", "{}\n")
            #expect(watch.changes().directories.isEmpty)
        }
    }

    @Test func aFolderRemovedIsReportedAndNoLongerWatched() throws {
        try withFolders { a, _ in
            let watch = DirectoryWatch(fileName: "live-activities.json")
            #expect(watch.watch(a))
            try FileManager.default.removeItem(atPath: a)
            #expect(watch.changes().directories == [a])
            #expect(!watch.isWatching(a))
            #expect(!watch.watch(a), "not there")
            try FileSystem.createDirectory(a, mode: 0o700, parentMode: 0o700)
            #expect(watch.watch(a))
            try FileSystem.writeAtomically(a + "/live-activities.json", "{}\n")
            #expect(watch.changes().directories == [a])
        }
    }

    @Test func anOverflowedQueueSaysSo() throws {
        // Past the kernel's queue (fs.inotify.max_queued_events, 16384 by default) events are dropped, and the
        // owner must look at everything.
        let limit = (try? FileSystem.readText("/proc/sys/fs/inotify/max_queued_events", limit: 64)).flatMap { $0 }
            .flatMap { Int($0.filter(\.isNumber)) }
        guard let limit, limit <= 65536 else { return }
        try withFolders { a, _ in
            let watch = DirectoryWatch(fileName: "live-activities.json")
            #expect(watch.watch(a))
            try FileSystem.writeAtomically(a + "/x", "{}\n")
            for _ in 0...(limit / 2 + 1) {  // two events a rename
                #expect(rename(a + "/x", a + "/y") == 0 && rename(a + "/y", a + "/x") == 0)
            }
            let changes = watch.changes()
            #expect(changes.overflowed)
            try FileSystem.writeAtomically(a + "/live-activities.json", "{}\n")
            #expect(watch.changes() == DirectoryWatch.Changes(directories: [a], overflowed: false))
        }
    }

    /// A folder replaced while its events were dropped (a queue overflow): ``revalidate()`` finds the new folder's
    /// watch, so a change there is reported again; a folder gone is answered as no longer watched.
    @Test func revalidationFindsAFolderReplacedWhileEventsWereDropped() throws {
        try withFolders { a, b in
            let watch = DirectoryWatch(fileName: "live-activities.json")
            #expect(watch.watch(a) && watch.watch(b))
            // Replaced and removed with no call to changes() between: as if the queue had dropped what it said.
            try FileManager.default.removeItem(atPath: a)
            try FileSystem.createDirectory(a, mode: 0o700)
            try FileManager.default.removeItem(atPath: b)
            #expect(watch.revalidate() == [b])
            #expect(watch.isWatching(a) && !watch.isWatching(b))
            _ = watch.changes()
            try FileSystem.writeAtomically(a + "/live-activities.json", "{}\n")
            #expect(watch.changes().directories == [a])
        }
    }

    /// A second path to a watched folder (a symbolic link) is not watched: the kernel would give it the first
    /// path's watch, and the first path's changes would be reported under the second.
    @Test func aSecondPathToAWatchedFolderIsTheOwnersToLookAt() throws {
        try withFolders { a, _ in
            let link = a + "-link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: a)
            defer { try? FileManager.default.removeItem(atPath: link) }
            let watch = DirectoryWatch(fileName: "live-activities.json")
            #expect(watch.watch(a))
            #expect(!watch.watch(link))
            try FileSystem.writeAtomically(a + "/live-activities.json", "{}\n")
            #expect(watch.changes().directories == [a])
        }
    }
}
