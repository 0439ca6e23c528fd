public import Logging
import NIOCore
import NIOPosix
import NSEAPNsServer
import NSESystem
import PostgresNIO

/// The fleet's connections to PostgreSQL: one `PostgresClient`, a pool of at most ``maxConnections``, run for as long
/// as the node serves (``run()``; cancelling it closes the pool). Each query leases a connection for its one round
/// trip, so a handful serve a node: a push holds none while its extension runs.
public struct FleetConnection: Sendable {
    /// The pool's bound unless told otherwise (`--database-connections`): PostgreSQL's default `max_connections`
    /// (100) still leaves room for a dozen nodes.
    public static let defaultMaxConnections = 8

    let client: PostgresClient
    public let url: FleetDatabaseURL
    let logger: Logger

    public init(url: FleetDatabaseURL, maxConnections: Int = Self.defaultMaxConnections, logger: Logger) {
        var configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: .disable)
        configuration.options.maximumConnections = max(1, maxConnections)
        configuration.options.connectTimeout = .seconds(5)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.url = url
        self.logger = logger
    }

    /// Runs the pool until cancelled.
    public func run() async {
        await client.run()
    }

    /// A connection of its own, outside the pool: for what must not queue behind the pushes' queries (the
    /// heartbeat), and the first connection at start.
    func connectAlone(id: Int = 0) async throws(FleetError) -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
        } catch {
            throw FleetError("database \(url): \(Self.describe(error))")
        }
    }

    /// Connects once, outside the pool, to say at start whether the database can be reached at all (the pool would
    /// keep trying): the schema is brought up to date on that connection (``FleetSchema``).
    func withFirstConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws(FleetError)
        -> T
    {
        let connection = try await connectAlone()
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch let error as FleetError {
            try? await connection.close()
            throw error
        } catch {
            try? await connection.close()
            throw FleetError("database \(url): \(Self.describe(error))")
        }
    }

    /// Runs `body` in one transaction on a pooled connection (`PostgresConnection.transaction`, below).
    func transaction<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        try await client.withConnection(isolation: isolation) { connection in
            try await connection.transaction(logger: logger, isolation: isolation, body)
        }
    }

    /// Runs `body` and turns whatever PostgreSQL said into a ``FleetError`` naming `what`.
    @discardableResult
    func attempt<T>(_ what: String, _ body: () async throws -> T) async throws(FleetError) -> T {
        do { return try await body() } catch { throw FleetError("fleet database: \(what): \(Self.describe(error))") }
    }

    /// One line for a postgres-nio error: PostgreSQL's own message when it sent one, else what failed underneath
    /// (PSQLError's description is deliberately generic). Never the password: PostgreSQL does not echo it.
    static func describe(_ error: any Error) -> String {
        if let transaction = error as? PostgresTransactionError,
            let cause = transaction.closureError ?? transaction.beginError ?? transaction.commitError
        {
            return describe(cause)
        }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying {
            let cause = (underlying as? NIOConnectionError)?.connectionErrors.first?.error ?? underlying
            if let io = cause as? IOError { return "cannot connect: " + NetworkFailure.phrase(errno: io.errnoCode) }
            if cause is ChannelError || cause is NIOConnectionError { return "cannot connect: \(cause)" }
            return "\(error.code): \(cause)"
        }
        return "\(error.code)"
    }
}

extension PostgresConnection {
    /// `BEGIN`, `body`, `COMMIT`. When `body` throws, the connection is closed, not rolled back: PostgreSQL rolls
    /// back what a closed connection left open (the pool opens another), and postgres-nio (1.33) never answers a
    /// query sent on a connection that has closed (it drops the write): `withTransaction`'s ROLLBACK after the pool
    /// closed a transaction's connection hung a stopping node for good.
    func transaction<T>(
        logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        try await query("BEGIN", logger: logger)
        let value: T
        do {
            value = try await body(self)
        } catch {
            try? await close()
            throw error
        }
        try await query("COMMIT", logger: logger)
        return value
    }
}
