public import Foundation

/// `NSObject` (and so `NSError`, `NSNumber`, `NSURL`…) as a C variadic argument, as on Apple's platforms, so that
/// `os_log("%@", type: .error, error as NSError)` compiles unchanged. swift-corelibs-foundation 6.3.1 makes only
/// `NSString` and `String` `CVarArg`.
///
/// `os_log` never reads the C encoding: it formats its arguments itself (`FormatString`). Elsewhere, through
/// `withVaList` or `String(format:)`, an object goes as an `NSString` of its `description` (the standard library's
/// `_CVarArgObject` hook, which `String` uses too): CoreFoundation's `%@` handles an NSString and crashed on any
/// other object. So `String(format: "%@", error as NSError)` writes the error's description, as on Apple.
///
/// swift-corelibs-foundation adds this conformance itself after 6.3.1 (swiftlang/swift-corelibs-foundation#5490); with
/// a toolchain that has it, the compiler reports this one as a duplicate: delete the file then.
// swift-format-ignore: AvoidRetroactiveConformances
extension NSObject: @retroactive CVarArg, @retroactive _CVarArgObject {
    public var _cVarArgObject: any CVarArg { NSString(string: description) }

    /// The object's address, as corelibs encodes an `NSString` (read only for the `NSString` `_cVarArgObject` gives).
    public var _cVarArgEncoding: [Int] { _encodeBitsAsWords(unsafeBitCast(self, to: AnyObject.self)) }
}
