// The `Security` module a developer's extension imports: the keychain it shares with its app, `SecRandomCopyBytes`.
// Its implementation is NSESecurity (Sources/NSESecurity). Compiled by `nse extension build`, not by SwiftPM: a
// package module named `Security` would be taken for Apple's by every dependency that asks `#if canImport(Security)`
// (swift-certificates does, and then fails to build).
@_exported public import NSESecurity
