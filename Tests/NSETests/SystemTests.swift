import Foundation
import NSESystem
import Testing

@Suite struct SystemTests {
    @Test func flexisipTimeIsUTCWithASpace() {
        #expect(SystemClock.flexisipTime(unixSeconds: 0) == "1970-01-01 00:00:00")
        #expect(SystemClock.flexisipTime(unixSeconds: 1_795_000_000) == "2026-11-18 11:06:40")
        #expect(SystemClock.rfc3339(unixSeconds: 1_795_000_000) == "2026-11-18T11:06:40Z")
        #expect(SystemClock.parseTimestamp(SystemClock.flexisipTime(unixSeconds: 1_795_000_000)) == 1_795_000_000)
    }

    @Test func asciiLowercasingChangesOnlyAToZ() {
        #expect(ASCII.lowercased("Content-TYPE: Message/CPIM;@[]`{}") == "content-type: message/cpim;@[]`{}")
        #expect(ASCII.lowercased("SIP:Bob"[...]) == "sip:bob")
        // Non-ASCII letters stay as they are: KELVIN SIGN must not become the token letter `k`.
        #expect(ASCII.lowercased("\u{212A}ÉÀ-Ä") == "\u{212A}ÉÀ-Ä")
        #expect(ASCII.lowercased(UInt8(ascii: "Z")) == UInt8(ascii: "z"))
        #expect(ASCII.lowercased(UInt8(ascii: "[")) == UInt8(ascii: "["))
        // Already lower case, short and long; a mixed one with non-ASCII letters after the change; empty.
        #expect(
            ASCII.lowercased("via") == "via"
                && ASCII.lowercased("x-already-lower-case-and-long") == "x-already-lower-case-and-long")
        #expect(ASCII.lowercased("Émile-ZOLA-\u{212A}") == "Émile-zola-\u{212A}" && ASCII.lowercased("") == "")
        #expect(
            ASCII.equalsIgnoringCase("Content-Length", "content-LENGTH") && !ASCII.equalsIgnoringCase("\u{212A}", "k"))
        #expect(!ASCII.equalsIgnoringCase("Via", "Vias") && ASCII.equalsIgnoringCase("", ""[...]))
    }

    /// One, two and more components join alike (the first two without the variadic array); a slash is never
    /// doubled; an absolute component starts again; a slash before a combining mark is still a slash, as the
    /// kernel reads it (a `Character` comparison took "/\u{301}x" for a relative name).
    @Test func pathJoinByComponentCount() {
        #expect(Path.join("/a", "b") == "/a/b")
        #expect(Path.join("/a/", "b") == "/a/b")
        #expect(Path.join("", "b") == "b")
        #expect(Path.join("/a", "") == "/a")
        #expect(Path.join("/a", "b", "c") == "/a/b/c")
        #expect(Path.join("/a", "b/", "c") == "/a/b/c")
        #expect(Path.join("/a", "b", "c", "d") == "/a/b/c/d")
        #expect(Path.join("/a", "/b", "c") == "/b/c")
        #expect(Path.join("/a", "b", "/c") == "/c")
        #expect(Path.join("/a", "b", "c", "/d", "e") == "/d/e")
        #expect(Path.join("/a", "/\u{301}x") == "/\u{301}x")
        #expect(Path.join("/a/\u{301}", "x") == "/a/\u{301}/x")
        #expect(Path.join(String(repeating: "p", count: 40), "notifications", "results.db").utf8.count == 40 + 14 + 11)
    }

    @Test func wallClockSecondsAndNanosecondsAgree() {
        let seconds = SystemClock.unixSeconds()
        let nanoseconds = SystemClock.unixNanoseconds()
        let milliseconds = SystemClock.unixMilliseconds()
        #expect(seconds > 1_700_000_000)
        #expect(abs(nanoseconds / 1_000_000_000 - seconds) <= 1)
        #expect(abs(milliseconds / 1000 - seconds) <= 1)
    }

    @Test func writeAtomicallyAndSyncDirectory() throws {
        let directory = NSTemporaryDirectory() + "nse-system-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileSystem.createDirectory(directory + "/a/b", mode: 0o700, parentMode: 0o700)
        #expect(try FileSystem.permissions(directory + "/a") == 0o700)
        #expect(try FileSystem.permissions(directory + "/a/b") == 0o700)
        let path = directory + "/a/b/record.json"
        try FileSystem.writeAtomically(path, Array("{}\n".utf8), mode: 0o600)
        try FileSystem.writeAtomically(path, Array("{\"v\":2}\n".utf8), mode: 0o600)
        #expect(try FileSystem.readFile(path) == Array("{\"v\":2}\n".utf8))
        #expect(try FileSystem.permissions(path) == 0o600)
        #expect(try FileSystem.contents(ofDirectory: directory + "/a/b") == ["record.json"])  // no temp file left
        try FileSystem.syncDirectory(directory + "/a/b")
        #expect(throws: SystemError.self) { try FileSystem.syncDirectory(directory + "/missing") }
        #expect(throws: SystemError.self) { try FileSystem.syncDirectory(path) }
    }

    @Test func createDirectoryRefusesAFile() throws {
        let directory = NSTemporaryDirectory() + "nse-system-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileSystem.createDirectory(directory)
        try FileSystem.writeAtomically(directory + "/file", "x", mode: 0o600)
        #expect {
            try FileSystem.createDirectory(directory + "/file", mode: 0o700)
        } throws: { error in
            (error as? SystemError)?.errnoCode == ENOTDIR
        }
        #expect(try FileSystem.permissions(directory + "/file") == 0o600)
        try FileSystem.createDirectory(directory)  // an existing directory is fine
    }
}
