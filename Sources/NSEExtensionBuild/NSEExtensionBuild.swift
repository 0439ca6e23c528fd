// `nse extension build`: a user's Notification Service Extension, its Swift files unchanged, built into an
// executable nse runs as it runs the reference extension (docs/sdk.md). The sources are checked as Xcode would
// (the Info.plist's extension point and principal class), compiled with swiftc against the SDK's modules (and the
// `os` overlays it compiles once from SDK/, SDKOverlays), linked with `libNSESDK.a`, and the result cached by the hash
// of everything that went into it.
