// Apple's MobileCoreServices on Linux, for the Uniform Type Identifier API iOS deprecated in 15.0 and NSE code still
// calls: the `kUTType…` constants, the `kUTTagClass…` tag classes and the `UTType…` functions, all answered by
// UniformTypeIdentifiers' `UTType`, so the old and new APIs agree.
//
// Apple's API speaks `CFString`. On Linux `CFString` is CoreFoundation's, which `import Foundation` does not show and
// which does not bridge to `String` with `as` (only `as!`), so the idioms NSE code relies on (`kUTTypeJPEG as String`,
// `ext as CFString`, `UTTypeCopyPreferredTagWithClass(…)?.takeRetainedValue() as String`) would not compile. Here
// `CFString` is `NSString`, which bridges both ways; `Unmanaged<CFString>` is then `Unmanaged<NSString>`. A file that
// also imports CoreFoundation and names `CFString` finds it ambiguous: no NSE we know of does.
//
// Foundation comes with this module (as CoreFoundation comes with Apple's), so the bridging casts compile in a file
// that imports only MobileCoreServices.
@_exported public import Foundation

/// A string of Apple's C APIs; `NSString` here, so that it bridges to and from `String` with `as`.
public typealias CFString = NSString
