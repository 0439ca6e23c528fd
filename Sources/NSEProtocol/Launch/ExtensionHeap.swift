import CMallocTuning

/// How an extension process keeps its heap between pushes.
public enum ExtensionHeap {
    /// Free memory the main heap keeps at its top rather than give back: 1 MB.
    public static let keptTop = 1 << 20

    /// Keeps up to ``keptTop`` free at the top of the heap (glibc gives back anything past 128 KB). A warm process
    /// grew its heap by ~190 KB for each push and gave it back after: a `brk` pair, a TLB shootdown on the other
    /// core and ~15 page faults touching it again, every push (counted: 16 page faults a push on the extension's main
    /// thread, 1 with this). iOS's allocator does not hand freed pages back at once either, and the memory
    /// footprint a push is judged on is the same: what it touches again is in use during the push.
    public static func keepTop() {
        _ = nse_set_trim_threshold(Int32(keptTop))
    }
}
