import NSEDevice
import NSEJSON

/// An accepted push once its row is committed: what holding, running and recording it need.
struct RecordedPush: Sendable {
    let record: AcceptedPushRecord
    let row: ResultStore.Row
    /// As last read: a device that comes back online is re-read first.
    var device: Device
    /// When it was accepted (monotonic nanoseconds), for `queued_ms` and `latency_ms`.
    let acceptedAt: UInt64
    /// Why it runs later than it was accepted, if it does: its expiration is then judged when it runs.
    var late: Lateness? = nil
    /// The liberty the `apple` offline store took with it, if one (its result's `store_liberty`).
    var liberty: StoreLiberties.Liberty? = nil
    /// Told the result (`/v1/notify`'s wait), if anyone waits for it.
    var completion: (@Sendable (JSON) -> Void)? = nil

    enum Lateness: Sendable {
        /// A previous run of the server answered it 200 and never ran it.
        case restarted
        /// Its device was offline.
        case heldOffline
        /// A low-priority push, delivered with the others of its burst.
        case burst
    }
}
