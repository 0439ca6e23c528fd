import NSECrypto
import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem

/// Opens a sealed envelope with the device's key and turns its plaintext into content: a message is rewritten, a
/// call offer escalated to CallKit; anything that fails falls back naming why (never quoting the content).
///
/// A signed envelope (format `nse2`) is shown only when its sender is verified: the signature is the key's that the
/// device trusts for the `from` it claims, the content was signed for this device, and its message id has not been
/// seen before. Otherwise the loc-key fallback says why (`sender-unverified: …`, `replayed: …`), never the name the
/// content claims. An anonymous envelope (`nse1`) is shown as before, unless the device requires signed senders.
/// `info.sender` says which: `verified`, `unverified` or `anonymous`.
struct EnvelopeOpener: Sendable {
    var device: Device
    var rewriter: Rewriter
    var escalation: CallEscalation

    /// An opened envelope: the content to show, and the files its message names (fetched next, ``AttachmentStep``).
    struct Opened {
        var content: DeliveredContent
        var attachments: [Plaintext.Attachment] = []
    }

    /// `source` names where the envelope came from in the result (`enc` for the payload, `sip` for a fetch).
    func open(_ text: String, source: String) -> DeliveredContent { opened(text, source: source).content }

    /// ``open(_:source:)``, with the message's attachments.
    func opened(_ text: String, source: String) -> Opened {
        var secretKey: SecretKey
        do { secretKey = try device.secretKey() } catch {
            return Opened(content: rewriter.fallback(reason: ReasonCode.keyUnavailable.reason("\(error.description)")))
        }
        if MultiEnvelope.hasFormatTag(text) { return openedMulti(text, source: source, current: secretKey) }
        let plaintext: Plaintext
        let sender: String
        let opening: OpeningKey
        do {
            let envelope = try Envelope(text: text)
            switch pick(envelope.keyID, current: secretKey) {
            case .open(let key, let used): (secretKey, opening) = (key, used)
            case .refuse(let reason): return Opened(content: rewriter.fallback(reason: reason))
            }
            var bytes = try envelope.open(with: secretKey)
            defer { for index in bytes.indices { bytes[index] = 0 } }
            switch envelope.format {
            case .anonymous:
                guard !device.config.requireSignedSender else {
                    return Opened(
                        content: unverified(
                            ReasonCode.senderUnverified.reason(
                                "the envelope is anonymous and the device requires signed senders"), opening: opening))
                }
                plaintext = try Plaintext(bytes)
                sender = "anonymous"
            case .signed:
                var (signature, signed) = try Envelope.signedParts(bytes)
                defer { for index in signed.indices { signed[index] = 0 } }
                plaintext = try Plaintext(signed)
                if let refusal = verify(signature, signed, claimedFrom: plaintext.from, recipient: envelope.keyID) {
                    return Opened(content: unverified(refusal, opening: opening))
                }
                sender = "verified"
            }
        } catch let error as EnvelopeError {
            return Opened(content: rewriter.fallback(reason: error.description))
        } catch let error as PlaintextError {
            return Opened(content: rewriter.fallback(reason: error.description))
        } catch {
            return Opened(content: rewriter.fallback(reason: ReasonCode.envelopeError.reason("\(error)")))
        }
        return presented(plaintext, sender: sender, opening: opening, source: source)
    }

    /// An opened plaintext shown: a message rewritten, a call escalated; the result says who sent it and which key
    /// opened it.
    func presented(_ plaintext: Plaintext, sender: String, opening: OpeningKey, source: String) -> Opened {
        var opened: Opened
        switch plaintext {
        case .message(let message):
            opened = Opened(content: rewriter.rewrite(message, source: source), attachments: message.attachments)
        case .call(let call):
            opened = Opened(content: escalation.escalate(call, source: source))
        }
        opened.content.info = (opened.content.info ?? [:]).merging(["sender": .string(sender)]).merging(opening.info)
        return opened
    }

    /// The key an envelope was opened with, as the result names it (`info.key_id`, `info.key`): its id, never
    /// the key.
    struct OpeningKey {
        var keyID: String
        /// `current`, or `retired` (a key a rotation replaced, still in its grace period).
        var state: String

        var info: JSONObject { ["key_id": .string(keyID), "key": .string(state)] }
    }

    /// What to open an envelope with, or why not.
    private enum Pick {
        case open(SecretKey, OpeningKey)
        case refuse(String)
    }

    /// The device's key for `keyID` (``KeyRing``): the current one, else a retired one in its grace period. A key
    /// past its grace is refused here with a reason that says so; an id the device never had is left to
    /// ``Envelope/open(with:)`` and its usual wrong-key reason.
    private func pick(_ keyID: String, current: SecretKey) -> Pick {
        let now = SystemClock.unixSeconds()
        let lookup: KeyRing.Lookup
        do { lookup = try device.keyRing.key(for: keyID, current: current, now: now) } catch {
            return .refuse(ReasonCode.keyUnavailable.reason("\(error.description)"))
        }
        switch lookup {
        case .current(let key):
            return .open(key, OpeningKey(keyID: keyID, state: "current"))
        case .retired(let key, _):
            return .open(key, OpeningKey(keyID: keyID, state: "retired"))
        case .expired(let retired):
            return .refuse(
                EnvelopeError(
                    .wrongKey,
                    "the envelope is sealed to key \(keyID), which this device retired at \(SystemClock.rfc3339(unixSeconds: retired.retiredAt)); its grace period ended at \(SystemClock.rfc3339(unixSeconds: retired.dropAt))"
                ).description)
        case .unknown(let key):
            let id = (try? key.publicKey().keyID) ?? device.config.keyID
            return .open(key, OpeningKey(keyID: id, state: "current"))
        }
    }

    /// Why a signed plaintext is not from a verified sender, or nil when it is (its message id then recorded).
    /// `signedMessage` is what the signature is over when it is not the claims alone (`nse3`: header, then
    /// claims); a nil `keyID` skips the `to_key` check (`nse3`: its recipient list is under the signature instead).
    func verify(
        _ signature: [UInt8], _ signed: [UInt8], claimedFrom from: String, recipient keyID: String?,
        signedMessage: [UInt8]? = nil
    ) -> String? {
        guard let claims = (try? JSON.parse(signed))?.objectValue,
            let keyText = claims["sender_key"]?.stringValue, let key = try? SigningPublicKey(base64: keyText),
            let messageID = claims["message_id"]?.stringValue, !messageID.isEmpty, messageID.utf8.count <= 128
        else {
            return ReasonCode.senderUnverified.reason("the signed content lacks a valid sender_key or message_id")
        }
        guard key.verifies(signature, of: signedMessage ?? signed) else {
            return ReasonCode.senderUnverified.reason(
                "the signature does not verify (tampered, or not made by the key it names)")
        }
        guard keyID == nil || claims["to_key"]?.stringValue == keyID else {
            return ReasonCode.senderUnverified.reason(
                "the content was signed for another device (to_key), then sealed to this one")
        }
        let trust: TrustStore
        do { trust = try device.cachedAppGroup().trust } catch {
            return ReasonCode.senderUnverified.reason("the trusted keys cannot be read: \(error.description)")
        }
        do {
            guard try trust.keys(for: from).contains(key.base64) else {
                if try !trust.contacts(trusting: key.base64).isEmpty {
                    return ReasonCode.senderUnverified.reason(
                        "the signing key is trusted for another contact, not the sender it claims")
                }
                return ReasonCode.senderUnverified.reason("the signing key is not trusted for the sender it claims")
            }
            guard try trust.firstSighting(of: messageID) else {
                return ReasonCode.replayed.reason("this signed message was shown before; it is not shown twice")
            }
        } catch {
            return ReasonCode.senderUnverified.reason("the trusted keys cannot be read: \(error.description)")
        }
        return nil
    }

    func unverified(_ reason: String, opening: OpeningKey) -> DeliveredContent {
        var content = rewriter.fallback(reason: reason)
        content.info = (content.info ?? [:]).merging(["sender": "unverified"]).merging(opening.info)
        return content
    }
}

extension Plaintext {
    /// Who the content says sent it.
    var from: String {
        switch self {
        case .message(let message): message.from
        case .call(let call): call.from
        }
    }
}

extension JSONObject {
    fileprivate func merging(_ other: JSONObject) -> JSONObject {
        var merged = self
        for (key, value) in other { merged[key] = value }
        return merged
    }
}
