import NSEDatabase
public import NSEJSON
public import NSESystem

/// The device's VoIP bookkeeping in the App Group store: strikes against the app (iOS stops delivering VoIP pushes
/// to an app that fails to report calls) and the call log.
public struct VoIPState: Sendable {
    let database: Database

    /// Strikes recorded so far.
    public func strikes() throws(DeviceError) -> Int {
        do {
            return Int(try database.execute("SELECT count(*) FROM strikes").first?.integer(0) ?? 0)
        } catch {
            throw error.deviceError
        }
    }

    /// Records one more strike; returns the new count.
    @discardableResult
    public func recordStrike(reason: String, at time: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> Int
    {
        do {
            return try database.write { tx throws(DatabaseError) -> Int in
                try tx.execute("INSERT INTO strikes (reason, at) VALUES (?, ?)", [.text(reason), .integer(time)])
                return Int(try tx.execute("SELECT count(*) FROM strikes").first?.integer(0) ?? 0)
            }
        } catch {
            throw error.deviceError
        }
    }

    /// Clears the strikes (`nse device reset-voip`).
    public func reset() throws(DeviceError) {
        do { try database.execute("DELETE FROM strikes") } catch { throw error.deviceError }
    }

    /// Adds an entry to the call log (its time goes in `at`).
    public func record(_ entry: JSONObject, at time: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) {
        var entry = entry
        entry["at"] = .int(time)
        do {
            try database.execute(
                "INSERT INTO calls (at, entry) VALUES (?, ?)", [.integer(time), .text(JSON.object(entry).serialized())])
        } catch {
            throw error.deviceError
        }
    }

    /// The call log, newest last (at most `limit` entries).
    public func callLog(limit: Int = 50) throws(DeviceError) -> [JSON] {
        do {
            let rows = try database.execute(
                "SELECT entry FROM calls ORDER BY id DESC LIMIT ?", [.integer(Int64(limit))])
            return rows.reversed().compactMap { row in row.text(0).flatMap { try? JSON.parse($0) } }
        } catch {
            throw error.deviceError
        }
    }
}
