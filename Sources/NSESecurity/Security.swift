// Apple's Security on Linux, for what a Notification Service Extension asks of it: the keychain items it shares with
// its app (`SecItemAdd`, `SecItemCopyMatching`, `SecItemUpdate`, `SecItemDelete` on generic and internet passwords,
// in the access groups its entitlements give), `SecCopyErrorMessageString`, and `SecRandomCopyBytes`.
//
// The items live in the device's keychain (`keychain.db` in its container, docs/sdk.md "Security"), where the app
// side (`nse device keychain`) and every extension process of the device read and write them. Foundation and the
// CoreFoundation types come with this module, as they come with Apple's.
@_exported public import NSECoreFoundation
