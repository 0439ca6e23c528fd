/// Server-side helpers: issue Digest challenges and verify Authorization headers.
public struct DigestVerifier: Sendable {
    /// The realm this verifier protects.
    public var realm: String
    /// The algorithm used in new challenges.
    public var algorithm: DigestAlgorithm

    /// Creates a verifier for a realm.
    public init(realm: String, algorithm: DigestAlgorithm = .md5) {
        self.realm = realm
        self.algorithm = algorithm
    }

    /// Builds a new challenge with a random nonce.
    public func makeChallenge(stale: Bool = false, qop: Bool = true) -> DigestChallenge {
        DigestChallenge.make(realm: realm, algorithm: algorithm, qop: qop, stale: stale)
    }

    /// Verifies an Authorization header value for `method` given the user's password and the nonce issued.
    public func verify(
        authorization headerValue: String, method: String, password: String,
        expectedUsername: String? = nil, issuedNonce: String? = nil
    ) -> Bool {
        guard let creds = try? DigestCredentials(parsing: headerValue) else { return false }
        guard creds.realm == realm else { return false }
        if let expectedUsername, creds.username != expectedUsername { return false }
        if let issuedNonce, creds.nonce != issuedNonce { return false }
        return creds.verify(password: password, method: method)
    }
}
