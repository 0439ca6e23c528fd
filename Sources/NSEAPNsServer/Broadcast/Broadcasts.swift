import Logging
import NIOPosix
import NSECrypto
import NSEDatabase
import NSEDevice
import NSESystem

/// The broadcast side of `nse serve` (iOS 18's channels), one job a type: where channels and broadcasts are kept
/// (``Keeper``: this node's ``ChannelStore``, or a fleet's ``FleetChannels``), ``BroadcastFanOut`` (a broadcast to
/// every subscribed activity), and a thread of its own for the store, where SQLite waits for the disk (never an
/// event loop or a cooperative thread). Without a keeper (the store could not be opened) the routes answer 500
/// `InternalServerError`.
final class Broadcasts: Sendable {
    /// Where channels and broadcasts are kept.
    enum Keeper: Sendable {
        /// This node's own SQLite database.
        case node(ChannelStore)
        /// The fleet's: every node reads the same channels, and hands out its share of each broadcast.
        case fleet(any FleetChannels, limit: Int)
        /// None could be opened.
        case none
    }

    /// The store, or the fleet, could not be used; what it said.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Where they are kept, as served: this node's store comes with a thread of its own; a fleet's channels are in
    /// PostgreSQL.
    private enum Place: Sendable {
        case node(ChannelStore, thread: NIOThreadPool)
        case fleet(any FleetChannels, limit: Int)
        case none
    }

    private let place: Place
    let fanOut: BroadcastFanOut?

    init(
        keeper: Keeper, devices: DeviceRegistry, logger: Logger,
        admit: @escaping @Sendable (AcceptedPush, Device) async -> APNsError?
    ) {
        switch keeper {
        case .node(let store):
            fanOut = BroadcastFanOut(store: store, devices: devices, logger: logger, admit: admit)
            let thread = NIOThreadPool(numberOfThreads: 1)
            thread.start()
            place = .node(store, thread: thread)
        case .fleet(let fleet, let limit):
            let fanOut = BroadcastFanOut(store: nil, devices: devices, logger: logger, admit: admit)
            fleet.handOutBroadcasts { broadcast, folder in await fanOut.handOutShare(broadcast, folder: folder) }
            self.fanOut = fanOut
            place = .fleet(fleet, limit: limit)
        case .none:
            fanOut = nil
            place = .none
        }
    }

    deinit {
        if case .node(_, let thread) = place { thread.shutdownGracefully { _ in } }
    }

    /// Makes a channel for the app; nil when it has as many as it may in that environment.
    func create(bundleID: String, environment: String, policy: BroadcastChannel.StoragePolicy) async throws(Failure)
        -> BroadcastChannel?
    {
        let channel: BroadcastChannel
        do {
            channel = BroadcastChannel(
                id: try BroadcastChannel.newID(), bundleID: bundleID, environment: environment, storagePolicy: policy,
                createdAt: SystemClock.unixMilliseconds())
        } catch {
            throw Failure(description: error.description)
        }
        let made = try await keep { store throws(DatabaseError) in
            try store.create(channel)
        } fleet: {
            fleet, limit throws(FleetError) in
            try await fleet.createChannel(channel, limit: limit)
        }
        return made ? channel : nil
    }

    /// What `id` names for the app in the environment.
    func lookup(_ id: String, bundleID: String, environment: String) async throws(Failure) -> ChannelStore.Lookup {
        try await keep { store throws(DatabaseError) in
            try store.lookup(id, bundleID: bundleID, environment: environment)
        } fleet: { fleet, _ throws(FleetError) in
            try await fleet.channel(id, bundleID: bundleID, environment: environment)
        }
    }

    /// The app's channels in the environment, oldest first.
    func channels(bundleID: String, environment: String) async throws(Failure) -> [String] {
        try await keep { store throws(DatabaseError) in
            try store.channels(bundleID: bundleID, environment: environment)
        } fleet: { fleet, _ throws(FleetError) in
            try await fleet.channels(bundleID: bundleID, environment: environment)
        }
    }

    /// Deletes a channel; false when it has no such channel (any more).
    func delete(_ id: String, bundleID: String, environment: String) async throws(Failure) -> Bool {
        let now = SystemClock.unixMilliseconds()
        return try await keep { store throws(DatabaseError) in
            try store.delete(id, bundleID: bundleID, environment: environment, now: now)
        } fleet: { fleet, _ throws(FleetError) in
            try await fleet.deleteChannel(id, bundleID: bundleID, environment: environment, now: now)
        }
    }

    /// Keeps a broadcast on `channel`, durably, and starts handing it out: on this node's own devices, or (in a
    /// fleet) each node on its own.
    func accept(
        on channel: BroadcastChannel, requestID: String, uniqueID: String, priority: Int, expiration: Int64?,
        collapseID: String?, payload: [UInt8]
    ) async throws(Failure) -> ChannelStore.Broadcast {
        let now = SystemClock.unixMilliseconds()
        let broadcast = try await keep { store throws(DatabaseError) in
            try store.accept(
                on: channel, requestID: requestID, uniqueID: uniqueID, priority: priority, expiration: expiration,
                collapseID: collapseID, payload: payload, now: now)
        } fleet: { fleet, _ throws(FleetError) in
            try await fleet.acceptBroadcast(
                on: channel, requestID: requestID, uniqueID: uniqueID, priority: priority, expiration: expiration,
                collapseID: collapseID, payload: payload, now: now)
        }
        // Answered 200 whatever happens next: if the server is stopping now, the next start hands it out.
        if case .node = place { fanOut?.start(broadcast) }
        return broadcast
    }

    /// Runs `local` on the store's thread, or `fleet` on the fleet.
    private func keep<T: Sendable>(
        _ local: @escaping @Sendable (ChannelStore) throws(DatabaseError) -> T,
        fleet: (any FleetChannels, Int) async throws(FleetError) -> T
    ) async throws(Failure) -> T {
        switch place {
        case .node(let store, let thread):
            do { return try await thread.runIfActive { try local(store) } } catch {
                throw Failure(description: "\(store.path): \(error)")
            }
        case .fleet(let shared, let limit):
            do { return try await fleet(shared, limit) } catch { throw Failure(description: error.description) }
        case .none:
            throw Failure(description: "no channel store")
        }
    }

    /// Stops taking broadcasts and waits for those being handed out to be admitted.
    func drain() async {
        await fanOut?.drain()
        if case .node(_, let thread) = place { try? await thread.shutdownGracefully() }
    }
}
