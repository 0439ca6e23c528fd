/// One reading of an extension process's memory, in kilobytes.
///
/// iOS's limit (24 MB for a Notification Service Extension) counts a process's *footprint*: its dirty and compressed
/// memory, not the clean pages it maps from its binary and shared libraries, which the system can drop and read
/// again. The Linux figure closest to it is the resident anonymous memory plus what was swapped out (`RssAnon` +
/// `VmSwap` in `/proc/PID/status`, as `Private_Dirty` + `Swap` of `smaps_rollup`); the resident set (`VmHWM`) also
/// counts every clean page touched, so a Swift extension linking Foundation or BoringSSL would be charged for code
/// iOS does not charge for (docs/protocol.md, "Memory").
struct MemorySample: Sendable, Equatable {
    /// The peak resident set so far (`VmHWM`): reported, not judged.
    var residentPeak: Int
    /// Anonymous resident plus swapped memory now; `nil` where the kernel has no `RssAnon` (before 4.5): the limit
    /// then falls back to the resident peak.
    var footprint: Int?
}
