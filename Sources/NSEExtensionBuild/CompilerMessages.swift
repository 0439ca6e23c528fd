import NSESystem

/// swiftc's messages on their way to stderr, a line at a time, less the one the toolchain makes about itself: glibc's
/// link-time warning that Foundation's static library calls `mktemp`. Every extension that links Foundation got it
/// (Xcode shows nothing of the kind); it is about code the user neither wrote nor can change, and it hid their own
/// warnings in the noise. Everything else, the user's warnings and errors, passes unchanged and in order.
///
/// gold prints the warning on one line that names the archive; GNU ld on two, "ARCHIVE(OBJECT): in function …" and
/// then "(.text+0x…): warning: the use of `mktemp' …": such a first line is held until the next one decides.
struct CompilerMessages {
    private var pending: [UInt8] = []
    /// A GNU ld "in function" line of Foundation's archives, waiting for the line after it.
    private var held: [UInt8]?
    private let write: ([UInt8]) -> Void

    init(write: @escaping ([UInt8]) -> Void = { _ = FileSystem.writeFully(fd: 2, $0) }) { self.write = write }

    private static func text(_ line: some Collection<UInt8>) -> String { String(decoding: line, as: UTF8.self) }

    /// A line that names one of Foundation's static archives (`libFoundation….a(`).
    private static func namesFoundationArchive(_ text: String) -> Bool {
        text.contains("/libFoundation") && text.contains(".a(")
    }

    private static func isMktempWarning(_ text: String) -> Bool {
        text.contains("warning: the use of `mktemp' is dangerous")
    }

    /// Takes the next bytes; writes every whole line but the noise.
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        pending.append(contentsOf: bytes)
        guard let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) else { return }
        var kept: [UInt8] = []
        for line in pending[...lastNewline].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .dropLast()
        {
            take(Array(line), into: &kept)
        }
        pending.removeSubrange(...lastNewline)
        if !kept.isEmpty { write(kept) }
    }

    /// Writes what is left: a held line, and a last line without its newline.
    mutating func finish() {
        var kept: [UInt8] = []
        if !pending.isEmpty {
            take(pending, into: &kept)
            pending = []
            // It had no newline: give it none.
            if kept.last == UInt8(ascii: "\n") { kept.removeLast() }
        }
        if let line = held {
            kept = line + [UInt8(ascii: "\n")] + kept
            held = nil
        }
        if !kept.isEmpty { write(kept) }
    }

    private mutating func take(_ line: [UInt8], into kept: inout [UInt8]) {
        let text = Self.text(line)
        if let previous = held {
            held = nil
            if Self.isMktempWarning(text) { return }  // GNU ld's pair: both dropped
            kept += previous + [UInt8(ascii: "\n")]
        }
        if Self.isMktempWarning(text), Self.namesFoundationArchive(text) { return }  // gold's one line
        if Self.namesFoundationArchive(text), text.contains(": in function") {
            held = line
            return
        }
        kept += line + [UInt8(ascii: "\n")]
    }
}
