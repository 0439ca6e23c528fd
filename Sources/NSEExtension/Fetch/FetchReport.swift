import NSEJSON

/// The SIP fetch's diagnostics, copied into the result's `extension.info`.
struct FetchReport {
    var transport: String?
    var registerStatus: Int?
    var registerMilliseconds: Double?
    var registrations = 0
    var callIDsReceived: [String] = []
    var stored = 0
    var fromStore = false
    /// The message was shown by an earlier notification: nothing was fetched.
    var alreadyShown = false
    /// What the shared core said when the fetch asked to start its own (`executor-started`, `main-core-running`).
    var sharedCore: String?
    var foundMilliseconds: Double?
    /// When the fetch decided to leave (the flush over, the deadline, the expiry notice or a failure).
    var leftMilliseconds: Double?
    /// The quiet window of the flush rule in force when the fetch left.
    var quietMilliseconds: Double?
    var imdnStatus: Int?
    var imdn: String?
    var error: String?
    var storeError: String?
    /// The SIP exchange, redacted (`SIPExchange`), when the host asked for it (`record_sip`).
    var sipExchange: JSONObject?

    func json(total: Double) -> JSONObject {
        var object: JSONObject = ["source": "sip", "from_store": .bool(fromStore)]
        object.reserveCapacity(16)
        if alreadyShown { object["already_shown"] = true }
        if let sharedCore { object["shared_core"] = .string(sharedCore) }
        object["transport"] = JSON.string(transport)
        object["register_status"] = JSON.int(registerStatus)
        object["registrations"] = .int(Int64(registrations))
        object["call_ids_received"] = .array(callIDsReceived.map(JSON.string))
        object["stored_for_later"] = .int(Int64(stored))
        var timings: JSONObject = ["total_ms": .double(Self.round(total))]
        if let registerMilliseconds { timings["register_ms"] = .double(Self.round(registerMilliseconds)) }
        if let foundMilliseconds { timings["message_ms"] = .double(Self.round(foundMilliseconds)) }
        if let foundMilliseconds, let leftMilliseconds {
            timings["drain_ms"] = .double(Self.round(leftMilliseconds - foundMilliseconds))
        }
        if let quietMilliseconds { timings["quiet_ms"] = .double(Self.round(quietMilliseconds)) }
        object["sip_timings"] = .object(timings)
        if let imdn { object["imdn"] = .string(imdn) }
        if let imdnStatus { object["imdn_status"] = .int(Int64(imdnStatus)) }
        if let error { object["sip_error"] = .string(error) }
        if let storeError { object["store_error"] = .string(storeError) }
        if let sipExchange { object["sip_exchange"] = .object(sipExchange) }
        return object
    }

    static func round(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
