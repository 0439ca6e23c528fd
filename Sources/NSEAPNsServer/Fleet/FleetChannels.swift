/// The broadcast channels and broadcasts of a fleet (docs/serve.md, "A fleet on PostgreSQL"), kept where every node
/// reads them: a channel made through one node is read, listed, deleted and broadcast to through any other, and a
/// broadcast taken by one node reaches the subscribed activities of every node's devices. A broadcast is kept before
/// its 200 with one hand-out owed per device folder the fleet serves at that moment; each node hands out those of the
/// folders it serves and marks them done, so a folder taken over or given back takes what it is owed with it.
public protocol FleetChannels: Sendable {
    /// Keeps `channel`, durably; false when its app has `limit` channels in that environment already, fleet-wide.
    func createChannel(_ channel: BroadcastChannel, limit: Int) async throws(FleetError) -> Bool
    /// What `id` names for the app in the environment.
    func channel(_ id: String, bundleID: String, environment: String) async throws(FleetError) -> ChannelStore.Lookup
    /// The app's channels in the environment, oldest first.
    func channels(bundleID: String, environment: String) async throws(FleetError) -> [String]
    /// Deletes a channel (kept as deleted); false when there is no such channel, or it was deleted already.
    func deleteChannel(_ id: String, bundleID: String, environment: String, now: Int64) async throws(FleetError)
        -> Bool
    /// Keeps a broadcast on `channel`, durably, before its 200, owed to every folder the fleet serves now; this
    /// node starts on its share at once.
    func acceptBroadcast(
        on channel: BroadcastChannel, requestID: String, uniqueID: String, priority: Int, expiration: Int64?,
        collapseID: String?, payload: [UInt8], now: Int64
    ) async throws(FleetError) -> ChannelStore.Broadcast
    /// From now on hands each broadcast owed to a folder this node serves to `handOut`, with the folder (as the
    /// nodes' rows name it), one at a time: true marks it done there; false (the node is stopping, or the folder
    /// leaving) leaves it owed, for this node later or the node the folder goes to.
    func handOutBroadcasts(_ handOut: @escaping @Sendable (ChannelStore.Broadcast, _ folder: String) async -> Bool)
    /// The fleet's unavailable switch: the reason every request is answered 503 with, nil when it is off.
    func unavailable() async throws(FleetError) -> String?
}
