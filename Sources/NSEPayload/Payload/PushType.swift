/// The `apns-push-type` of a push, which decides its size limit and who handles it.
public enum PushType: String, Sendable, CaseIterable {
    case alert, background, voip

    /// APNs's payload limit for this push type, in bytes.
    public var payloadLimit: Int { self == .voip ? 5120 : 4096 }
}
