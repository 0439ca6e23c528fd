import NSECrypto
import NSEDevice
import NSEPayload
import NSESystem

/// The `nse3` envelope, sealed once for all of a person's devices (``MultiEnvelope``): this device finds its own
/// share by key id (its current key, else a retired one in its grace period), opens the content, and shows it only
/// from a verified sender, as for `nse2`. An envelope with no share for this device is the loc-key fallback
/// `envelope-not-recipient`: a device added after the message was sent was not among its recipients.
extension EnvelopeOpener {
    func openedMulti(_ text: String, source: String, current: SecretKey) -> Opened {
        let envelope: MultiEnvelope
        do { envelope = try MultiEnvelope(text: text) } catch {
            return Opened(content: rewriter.fallback(reason: error.description))
        }
        let key: SecretKey
        let opening: OpeningKey
        switch share(of: envelope, current: current) {
        case .open(let found, let used): (key, opening) = (found, used)
        case .refuse(let reason): return Opened(content: rewriter.fallback(reason: reason))
        }
        var opened: MultiEnvelope.Opened
        do { opened = try envelope.open(with: key, keyID: opening.keyID) } catch {
            return Opened(content: rewriter.fallback(reason: error.description))
        }
        defer { opened.wipe() }
        let plaintext: Plaintext
        do { plaintext = try Plaintext(opened.plaintext) } catch {
            return Opened(content: rewriter.fallback(reason: error.description))
        }
        if let refusal = verify(
            opened.signature, opened.plaintext, claimedFrom: plaintext.from, recipient: nil,
            signedMessage: opened.signedMessage)
        {
            return Opened(content: unverified(refusal, opening: opening))
        }
        return presented(plaintext, sender: "verified", opening: opening, source: source)
    }

    /// The key of this device that one of the envelope's shares is sealed to, or why there is none.
    private enum Share {
        case open(SecretKey, OpeningKey)
        case refuse(String)
    }

    /// The current key when a share names it, else a retired key in its grace period that one names; a share for a
    /// retired key past its grace is refused saying so, and no share at all is `envelope-not-recipient`.
    private func share(of envelope: MultiEnvelope, current: SecretKey) -> Share {
        let ids = Set(envelope.keyIDs)
        let now = SystemClock.unixSeconds()
        let ring = device.keyRing
        do {
            let currentID: String
            do { currentID = try current.publicKey().keyID } catch {
                return .refuse(
                    ReasonCode.keyUnavailable.reason("the device's key pair is unusable: \(error.description)"))
            }
            if ids.contains(currentID) { return .open(current, OpeningKey(keyID: currentID, state: "current")) }
            var refusal: String? = nil
            for retired in try ring.retiredKeys() where ids.contains(retired.keyID) {
                switch try ring.key(for: retired.keyID, current: current, now: now) {
                case .retired(let key, _):
                    return .open(key, OpeningKey(keyID: retired.keyID, state: "retired"))
                case .expired(let gone):
                    refusal =
                        EnvelopeError(
                            .wrongKey,
                            "the envelope is sealed to key \(gone.keyID), which this device retired at \(SystemClock.rfc3339(unixSeconds: gone.retiredAt)); its grace period ended at \(SystemClock.rfc3339(unixSeconds: gone.dropAt))"
                        ).description
                case .current, .unknown:
                    continue
                }
            }
            return .refuse(
                refusal
                    ?? EnvelopeError(
                        .notRecipient,
                        "the envelope is sealed to \(ids.count) device key(s), none of them this device's (\(currentID))"
                    ).description)
        } catch {
            return .refuse(ReasonCode.keyUnavailable.reason("\(error.description)"))
        }
    }
}
