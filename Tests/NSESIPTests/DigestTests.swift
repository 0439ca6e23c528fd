import Testing

@testable import NSESIP

@Suite struct HashTests {
    @Test func md5Vectors() {
        // RFC 1321 §A.5 test suite.
        let vectors: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a"
            ),
        ]
        for (input, expected) in vectors { #expect(MD5.hex(input) == expected, "\(input)") }
    }

    @Test func sha256Vectors() {
        // FIPS 180-4 / NIST examples, through the algorithm SIP digest authentication uses (libsodium underneath).
        let sha256 = DigestAlgorithm.sha256
        #expect(sha256.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(sha256.hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            sha256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            sha256.hash(String(repeating: "a", count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(DigestAlgorithm.sha256Sess.hash("abc") == sha256.hash("abc"))
        #expect(DigestAlgorithm.md5Sess.hash("abc") == "900150983cd24fb0d6963f7d28e17f72")
    }

    @Test func clientNoncesAreFreshLowercaseHex() {
        let nonces = (0..<8).map { _ in SIPIdentifiers.cnonce() }
        for nonce in nonces {
            #expect(nonce.utf8.count == 16)
            #expect(nonce.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }, "\(nonce)")
        }
        #expect(Set(nonces).count == nonces.count)
    }
}

@Suite struct DigestTests {
    @Test func rfc2617Example() {
        let challenge = DigestChallenge(
            realm: "testrealm@host.com", nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
            opaque: "5ccc069c403ebaf9f0171e9517f40e41", algorithm: .md5, qopOptions: ["auth", "auth-int"])
        let creds = DigestCredentials.answer(
            challenge, username: "Mufasa", password: "Circle Of Life", method: "GET",
            uri: "/dir/index.html", cnonce: "0a4f113b", nonceCount: 1)
        #expect(creds.response == "6629fae49393a05397450978507c4ef1")
        #expect(creds.nonceCount == "00000001")
        #expect(creds.qop == "auth")
        #expect(creds.verify(password: "Circle Of Life", method: "GET"))
        #expect(!creds.verify(password: "wrong", method: "GET"))
    }

    @Test func rfc7616Sha256Example() throws {
        let header = """
            Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """
        let challenge = try DigestChallenge(parsing: header)
        #expect(challenge.algorithm == .sha256)
        #expect(challenge.qopOptions == ["auth", "auth-int"])
        let creds = DigestCredentials.answer(
            challenge, username: "Mufasa", password: "Circle of Life", method: "GET",
            uri: "/dir/index.html", cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", nonceCount: 1)
        #expect(creds.response == "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")
        let md5 = DigestChallenge(
            realm: challenge.realm, nonce: challenge.nonce, opaque: challenge.opaque, algorithm: .md5)
        let credsMD5 = DigestCredentials.answer(
            md5, username: "Mufasa", password: "Circle of Life", method: "GET",
            uri: "/dir/index.html", cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", nonceCount: 1)
        #expect(credsMD5.response == "8ca523f5e9506fed4657c9700eebdbec")
    }

    @Test func rfc2069FormWithoutQop() throws {
        let challenge = try DigestChallenge(parsing: "Digest realm=\"r\", nonce=\"n\"")
        #expect(challenge.qopOptions.isEmpty)
        #expect(challenge.algorithm == .md5)
        let creds = DigestCredentials.answer(challenge, username: "u", password: "p", method: "REGISTER", uri: "sip:r")
        #expect(creds.qop == nil && creds.cnonce == nil && creds.nonceCount == nil)
        let ha1 = MD5.hex("u:r:p")
        let ha2 = MD5.hex("REGISTER:sip:r")
        #expect(creds.response == MD5.hex("\(ha1):n:\(ha2)"))
        #expect(!creds.description.contains("qop"))
    }

    @Test func challengeAndAuthorizationRoundTrip() throws {
        let verifier = DigestVerifier(realm: "example.org", algorithm: .sha256)
        let challenge = verifier.makeChallenge()
        let parsed = try DigestChallenge(parsing: challenge.description)
        #expect(parsed == challenge)
        let creds = DigestCredentials.answer(
            parsed, username: "bob", password: "pw", method: "REGISTER", uri: "sip:example.org", nonceCount: 7)
        #expect(creds.nonceCount == "00000007")
        let header = creds.description
        #expect(try DigestCredentials(parsing: header) == creds)
        #expect(
            verifier.verify(
                authorization: header, method: "REGISTER", password: "pw", expectedUsername: "bob",
                issuedNonce: challenge.nonce))
        #expect(!verifier.verify(authorization: header, method: "REGISTER", password: "bad"))
        #expect(!verifier.verify(authorization: header, method: "REGISTER", password: "pw", issuedNonce: "other"))
        #expect(!verifier.verify(authorization: header, method: "INVITE", password: "pw"))
        let sess = DigestChallenge(realm: "r", nonce: "n", algorithm: .md5Sess)
        let sc = DigestCredentials.answer(sess, username: "u", password: "p", method: "M", uri: "sip:r", cnonce: "c")
        let ha1 = MD5.hex("\(MD5.hex("u:r:p")):n:c")
        #expect(sc.response == MD5.hex("\(ha1):n:00000001:c:auth:\(MD5.hex("M:sip:r"))"))
        #expect(sc.verify(password: "p", method: "M"))
    }

    @Test func staleAndUnsupported() throws {
        let c = try DigestChallenge(parsing: "Digest realm=\"r\",nonce=\"n\",stale=TRUE,algorithm=MD5-sess")
        #expect(c.stale)
        #expect(c.algorithm == .md5Sess)
        expectSIPError(.authenticationFailed) { _ = try DigestChallenge(parsing: "Basic realm=\"r\"") }
        expectSIPError(.malformedMessage) { _ = try DigestChallenge(parsing: "Digest nonce=\"n\"") }
    }

    @Test func nonceStoreTracksCountsAndExpiry() {
        var store = DigestNonceStore(lifetime: .seconds(10), capacity: 2)
        let start = ContinuousClock.now
        let nonce = store.issue(now: start)
        let challenge = DigestChallenge(realm: "r", nonce: nonce, algorithm: .sha256)
        let c1 = DigestCredentials.answer(
            challenge, username: "u", password: "p", method: "REGISTER", uri: "sip:r", nonceCount: 1)
        let c2 = DigestCredentials.answer(
            challenge, username: "u", password: "p", method: "REGISTER", uri: "sip:r", nonceCount: 2)
        #expect(store.check(c1, now: start) == .valid)
        #expect(store.check(c1, now: start) == .replayed)
        #expect(store.check(c2, now: start) == .valid)
        #expect(store.check(c2, now: start + .seconds(11)) == .stale)
        _ = store.issue(now: start)
        _ = store.issue(now: start)
        #expect(store.check(c2, now: start) == .unknown)  // evicted by capacity
        #expect(c2.verify(password: "p", method: "REGISTER"))
    }
}
