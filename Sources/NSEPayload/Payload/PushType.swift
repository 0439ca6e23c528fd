/// The `apns-push-type` of a push, which decides its size limit and who handles it.
public enum PushType: String, Sendable, CaseIterable {
    case alert, background, voip
    /// An ActivityKit push (`nse serve`): iOS hands it to the app's Live Activity, never to an extension.
    case liveactivity

    /// APNs's payload limit for this push type, in bytes.
    public var payloadLimit: Int { self == .voip ? 5120 : 4096 }
}
