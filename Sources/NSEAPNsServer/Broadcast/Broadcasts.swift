import Logging
import NIOPosix
import NSEDatabase
import NSEDevice

/// The broadcast side of `nse serve` (iOS 18's channels), one job a type: ``ChannelStore`` (channels and
/// broadcasts on disk), ``BroadcastFanOut`` (a broadcast to every subscribed activity), and a thread of their own
/// for the store, where SQLite waits for the disk (never an event loop or a cooperative thread). Without a store
/// (it could not be opened) the routes answer 500 `InternalServerError`.
final class Broadcasts: Sendable {
    let store: ChannelStore?
    let fanOut: BroadcastFanOut?
    private let threads: NIOThreadPool

    init(
        store: ChannelStore?, devices: DeviceRegistry, logger: Logger,
        admit: @escaping @Sendable (AcceptedPush, Device) async -> APNsError?
    ) {
        self.store = store
        fanOut = store.map { BroadcastFanOut(store: $0, devices: devices, logger: logger, admit: admit) }
        threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
    }

    deinit {
        threads.shutdownGracefully { _ in }
    }

    /// Runs `body` on the store's thread; nil when there is no store.
    func withStore<T: Sendable>(_ body: @escaping @Sendable (ChannelStore) throws -> T) async throws -> T? {
        guard let store else { return nil }
        return try await threads.runIfActive { try body(store) }
    }

    /// Stops taking broadcasts and waits for those being handed out to be admitted.
    func drain() async {
        await fanOut?.drain()
        try? await threads.shutdownGracefully()
    }
}
