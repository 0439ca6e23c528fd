// Apple's MobileCoreServices on Linux, for the Uniform Type Identifier API iOS deprecated in 15.0 and NSE code still
// calls: the `kUTType…` constants, the `kUTTagClass…` tag classes and the `UTType…` functions, all answered by
// UniformTypeIdentifiers' `UTType`, so the old and new APIs agree.
//
// Apple's API speaks `CFString`, NSECoreFoundation's (`NSString`, so that it bridges both ways with `as`);
// `Unmanaged<CFString>` is then `Unmanaged<NSString>`. Foundation comes with it, as CoreFoundation comes with Apple's.
@_exported public import NSECoreFoundation
