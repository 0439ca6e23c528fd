public import NSEJSON

/// How APNs's storage treats this device while it is offline (`nse device set --apns-store`, docs/serve.md "An
/// offline device"). Apple: it keeps one notification per app, "usually the latest" but not always, may deliver
/// out of order, and may throttle or drop priority 5 and 1 pushes.
public enum APNsStorePolicy: String, Sendable, Equatable, CaseIterable, JSONConvertible {
    /// Exactly the rules and no liberty: the newest push per app kept, delivered in order, nothing dropped.
    case strict
    /// The rules and the liberties Apple reserves, taken by a seeded draw and recorded in each result they touch.
    case apple
}
