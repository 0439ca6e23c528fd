import NSESystem

/// swiftc's messages on their way to stderr, a line at a time, less the one the toolchain makes about itself: glibc's
/// link-time warning that Foundation's static library calls `mktemp`. Every extension that links Foundation got it
/// (Xcode shows nothing of the kind); it is about code the user neither wrote nor can change, and it hid their own
/// warnings in the noise. Everything else, the user's warnings and errors, passes unchanged and in order.
struct CompilerMessages {
    private var pending: [UInt8] = []
    private let descriptor: Int32

    init(descriptor: Int32 = 2) { self.descriptor = descriptor }

    /// Whether a line is the toolchain's own warning (only from Foundation's static archives, only that function).
    static func isToolchainNoise(_ line: some Collection<UInt8>) -> Bool {
        let text = String(decoding: line, as: UTF8.self)
        return text.contains("/libFoundation") && text.contains(".a(")
            && text.contains("warning: the use of `mktemp' is dangerous")
    }

    /// Takes the next bytes; writes every whole line but the noise.
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        pending.append(contentsOf: bytes)
        guard let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) else { return }
        var kept: [UInt8] = []
        for line in pending[...lastNewline].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .dropLast()
        where !Self.isToolchainNoise(line) {
            kept += line
            kept.append(UInt8(ascii: "\n"))
        }
        pending.removeSubrange(...lastNewline)
        if !kept.isEmpty { _ = FileSystem.writeFully(fd: descriptor, kept) }
    }

    /// Writes what is left of a last line without its newline.
    mutating func finish() {
        guard !pending.isEmpty else { return }
        if !Self.isToolchainNoise(pending) { _ = FileSystem.writeFully(fd: descriptor, pending) }
        pending = []
    }
}
