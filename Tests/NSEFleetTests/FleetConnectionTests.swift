import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import NSEFleet

/// The fleet's own use of postgres-nio: what a node's stop may cut short ends, with an error.
@Suite(.serialized)
struct FleetConnectionTests {
    @Test(
        "a transaction cut short by the pool's close ends with an error, not a hang",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func transactionCutByClose() async throws {
        let cluster = try PostgresCluster()
        // postgres-nio's own withTransaction hung here, one time in a few: its ROLLBACK went to a closed connection.
        for delay in [0, 10, 20, 50, 100, 200] {
            let connection = FleetConnection(url: try FleetDatabaseURL(cluster.url), logger: Logger(label: "test"))
            let pool = Task { await connection.run() }
            _ = try await connection.client.query("SELECT 1")
            let outcome = Mutex<Result<Void, any Error>?>(nil)
            let started = Atomic(false)
            let transaction = Task {
                do {
                    _ = try await connection.transaction { transaction in
                        started.store(true, ordering: .sequentiallyConsistent)
                        return try await transaction.query("SELECT pg_sleep(0.5)", logger: Logger(label: "test"))
                    }
                    outcome.withLock { $0 = .success(()) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                }
            }
            for _ in 0..<100 where !started.load(ordering: .sequentiallyConsistent) {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(delay))
            pool.cancel()
            // Polled, not awaited: a hung transaction must fail the test, not hold it.
            for _ in 0..<100 where outcome.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(50)) }
            let ended = outcome.withLock { $0 }
            #expect(ended != nil, "still under way 5 s after the pool closed (\(delay) ms in)")
            if case .success = ended { Issue.record("committed although its connection closed (\(delay) ms in)") }
            _ = transaction
            await pool.value
        }
    }
}
