import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The bridge to SQLite: the only Swift file that touches its C API. A connection owns its `sqlite3*` and its
/// prepared statements and frees them in `deinit`; every result code becomes a thrown ``DatabaseError`` at once.
/// A connection is not thread-safe by itself: ``Database`` serializes its use behind a lock.
/// - SeeAlso: https://www.sqlite.org/c3ref/intro.html
final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// What error messages call the database: its path.
    let path: String
    /// Prepared statements by their SQL text, reused (SQLite resets them between uses).
    private var statements: [String: OpaquePointer] = [:]
    /// The sync mode the connection is in (``Database`` opens it `durable`).
    var durability: Database.Durability = .durable

    /// Opens (creating if asked) the database at `path`. The connection itself takes no mutex: ``Database`` holds one.
    init(path: String, create: Bool, readOnly: Bool) throws(DatabaseError) {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create, !readOnly { flags |= SQLITE_OPEN_CREATE }
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        handle = opened
        if status != SQLITE_OK {
            let error = failure(status, "open")
            sqlite3_close_v2(opened)
            handle = nil
            throw error
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        // close_v2 defers the close until every statement is finalized, and never fails for that reason.
        sqlite3_close_v2(handle)
    }

    /// Keeps the write-ahead log between connections: it is neither deleted nor checkpointed when this connection
    /// closes. A process that opens the database for one short job then creates no file (whose directory entry
    /// would need a sync of its own) and syncs nothing on its way out; checkpoints happen when the log passes the
    /// auto-checkpoint size, in whichever connection commits past it.
    func keepWriteAheadLog() throws(DatabaseError) {
        var persist: Int32 = 1
        let status = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        if status != SQLITE_OK { throw failure(status, "keep the write-ahead log") }
        let config = nse_sqlite3_no_checkpoint_on_close(handle)
        if config != SQLITE_OK { throw failure(config, "keep the write-ahead log") }
    }

    /// Sets how long a statement waits for another process's lock before failing with `busy`.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs one or more statements without parameters or results (schema, pragmas, BEGIN/COMMIT).
    func executeScript(_ sql: String) throws(DatabaseError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        if status != SQLITE_OK { throw failure(status, "execute") }
    }

    /// Runs a statement that takes no parameters and returns no rows (BEGIN, COMMIT, SAVEPOINT) from the statement
    /// cache: `sqlite3_exec` would parse it again each time, and a warm extension's push opens about seven
    /// transactions.
    func control(_ sql: String) throws(DatabaseError) {
        _ = try run(sql, [])
    }

    /// Runs one statement with `bindings` and returns its rows (none for a write).
    func run(_ sql: String, _ bindings: [SQLValue]) throws(DatabaseError) -> [SQLRow] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, value) in bindings.enumerated() {
            try bind(value, at: Int32(offset + 1), in: statement)
        }
        var rows: [SQLRow] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw failure(status, "step") }
            let count = sqlite3_column_count(statement)
            var values: [SQLValue] = []
            values.reserveCapacity(Int(count))
            for column in 0..<count { values.append(self.column(column, of: statement)) }
            rows.append(SQLRow(values))
        }
    }

    /// Rows the last write changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether the connection is inside a transaction it has not committed.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    private func prepared(_ sql: String) throws(DatabaseError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status, "prepare") }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLValue, at index: Int32, in statement: OpaquePointer) throws(DatabaseError) {
        let status: Int32
        switch value {
        case .null:
            status = sqlite3_bind_null(statement, index)
        case .integer(let integer):
            status = sqlite3_bind_int64(statement, index, integer)
        case .real(let real):
            status = sqlite3_bind_double(statement, index, real)
        case .text(let text):
            // By length, not as a C string: a text may hold NUL characters.
            status = text.utf8CString.withUnsafeBufferPointer {
                nse_sqlite3_bind_text(statement, index, $0.baseAddress!, Int32($0.count - 1))
            }
        case .blob(let bytes):
            status = bytes.withUnsafeBytes {
                nse_sqlite3_bind_blob(
                    statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count))
            }
        }
        if status != SQLITE_OK { throw failure(status, "bind") }
    }

    private func column(_ index: Int32, of statement: OpaquePointer) -> SQLValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// The error for `status`, named by what was being done and the file; SQLite's message says which constraint
    /// or why the file could not be opened, never a bound value.
    private func failure(_ status: Int32, _ operation: String) -> DatabaseError {
        let primary = status & 0xFF
        let code: DatabaseError.Code
        switch primary {
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: code = .cannotOpen
        case SQLITE_CORRUPT, SQLITE_NOTADB: code = .corrupt
        case SQLITE_FULL: code = .full
        case SQLITE_READONLY: code = .readOnly
        case SQLITE_BUSY, SQLITE_LOCKED: code = .busy
        case SQLITE_CONSTRAINT: code = .constraint
        default: code = .other
        }
        var detail = String(cString: sqlite3_errstr(status))
        if let handle, let message = sqlite3_errmsg(handle) {
            let text = String(cString: message)
            if !text.isEmpty, text != detail { detail = text }
        }
        // An I/O error is often the disk filling up mid-write: say so when errno agrees.
        if primary == SQLITE_IOERR, let handle, sqlite3_system_errno(handle) == ENOSPC {
            return DatabaseError(
                code: .full, resultCode: status, message: "\(path): \(operation): no space left on device")
        }
        switch code {
        case .corrupt:
            detail = "not a database, or damaged (\(detail)): move it aside and nse starts a new one"
        case .readOnly:
            detail = "read-only (\(detail))"
        case .full:
            detail = "the disk is full (\(detail))"
        default:
            break
        }
        return DatabaseError(code: code, resultCode: status, message: "\(path): \(operation): \(detail)")
    }
}
