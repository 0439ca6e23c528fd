import Hummingbird

extension Request {
    /// The request's headers as the APNs rules read them: names lowercase, in the order received.
    var apnsHeaders: APNsHeaders {
        headers.map { (name: $0.name.canonicalName.lowercased(), value: $0.value) }
    }
}
