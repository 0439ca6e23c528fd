import CFuzzer
import NSEFuzzTargets

#if canImport(Glibc)
    import Glibc
#endif

/// The process's `main`. SwiftPM links an executable target with `main` renamed to `<module>_main`, so libFuzzer's
/// own `main` is not the one that runs: this one hands argv to libFuzzer's driver with the entry point below.
@_cdecl("nse_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzerTestOneInput(data, size) }
}

/// The target this process fuzzes, from `NSE_FUZZ_TARGET` (read once, before the first input).
nonisolated(unsafe) private var selected: FuzzTarget?

/// libFuzzer calls this once before the first input: pick the target or stop with the list of names.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    guard let raw = getenv("NSE_FUZZ_TARGET"), let target = FuzzTarget(rawValue: String(cString: raw)) else {
        report("nse-fuzz: set NSE_FUZZ_TARGET to one of: \(names)")
        exit(64)
    }
    selected = target
    return 0
}

/// libFuzzer calls this for every input: a broken invariant is a crash, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = selected else { return 0 }
    do {
        try target.run(UnsafeRawBufferPointer(start: data, count: size))
    } catch {
        report("nse-fuzz: invariant broken: \(error.description)")
        abort()
    }
    return 0
}

/// One line on standard error.
private func report(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
