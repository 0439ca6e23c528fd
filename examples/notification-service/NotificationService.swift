import CryptoKit
import Foundation
import Intents
import Security
import UniformTypeIdentifiers
import UserNotifications
import os.log

/// The Notification Service Extension of an end-to-end-encrypted messenger.
///
/// The server cannot read the message: the sender sealed it to this device's key with HPKE (RFC 9180), and the push
/// carries it under `enc` beside an alert the server wrote itself ("New message"). For each push the extension
///   1. opens the envelope with the device's private key, which the app keeps in the keychain group it shares with
///      its extension;
///   2. shows who sent what (title, subtitle, body, thread), with the small picture the message may carry inline;
///   3. makes it a communication notification: the sender as an `INPerson`, an `INSendMessageIntent` donated, the
///      content updated from it;
///   4. downloads the full picture from the payload's `media-url`, when there is one, and shows it instead.
/// When time runs out first, `serviceExtensionTimeWillExpire` delivers the best attempt made so far. When the content
/// cannot be opened, the server's own alert is shown: never the ciphertext, never an error's detail.
class NotificationService: UNNotificationServiceExtension {
    /// Where the app keeps the device's X25519 private key (base64) at sign-in: a generic password in the keychain
    /// access group it shares with its extension (NotificationService.entitlements, `keychain-access-groups`).
    static let keychainGroup = "ABCDE12345.org.example.shared"
    static let keyService = "org.example.app.e2ee"
    static let keyAccount = "device-key"
    /// How the sender seals (`hpke1`): RFC 9180 base mode with this ciphersuite, this info string, and the format
    /// tag as additional authenticated data.
    static let ciphersuite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly
    static let info = Data("nse-hpke1".utf8)
    static let additionalData = Data("hpke1".utf8)

    private let log = Logger(subsystem: "org.example.app.NotificationService", category: "push")

    // didReceive and serviceExtensionTimeWillExpire run on different threads: what they share is behind the lock.
    private let lock = NSLock()
    private var contentHandler: ((UNNotificationContent) -> Void)?
    private var bestAttemptContent: UNNotificationContent?
    private var download: URLSessionDownloadTask?

    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        lock.lock()
        self.contentHandler = contentHandler
        bestAttemptContent = request.content
        lock.unlock()

        let message: Message
        do {
            message = try open(request.content.userInfo)
        } catch {
            let reason = (error as? OpenFailure)?.rawValue ?? "unknown"
            log.error("push \(request.identifier, privacy: .public): content not opened (\(reason, privacy: .public))")
            finish(with: request.content)
            return
        }
        log.info("push \(request.identifier, privacy: .public): a message from \(message.from)")

        let content = request.content.mutableCopy() as! UNMutableNotificationContent
        content.title = message.displayName ?? message.from
        content.subtitle = message.subject ?? ""
        content.body = message.text
        content.threadIdentifier = message.chatRoom ?? message.from
        if let thumbnail = message.image.flatMap(inlineAttachment) {
            content.attachments = [thumbnail]
        }
        let intent = donatedIntent(for: message)
        let shown = communicationNotification(content, intent)
        // Already better than the server's alert: the best attempt from here on.
        remember(shown)

        guard let text = request.content.userInfo["media-url"] as? String, let url = URL(string: text),
            url.scheme == "https" || url.scheme == "http"
        else {
            finish(with: shown)
            return
        }
        downloadImage(from: url) { picture in
            guard let picture = picture else {
                self.finish(with: shown)
                return
            }
            let withPicture = content.mutableCopy() as! UNMutableNotificationContent
            withPicture.attachments = [picture]
            self.finish(with: self.communicationNotification(withPicture, intent))
        }
    }

    override func serviceExtensionTimeWillExpire() {
        lock.lock()
        let best = bestAttemptContent
        let pending = download
        lock.unlock()
        log.notice("time will expire: delivering the best attempt")
        pending?.cancel()
        if let best = best {
            finish(with: best)
        }
    }

    // MARK: - Steps

    /// The message in the push's `enc`: the envelope's fields, then HPKE with the device's key, then its JSON.
    private func open(_ userInfo: [AnyHashable: Any]) throws -> Message {
        guard let envelope = userInfo["enc"] as? String else { throw OpenFailure.noEnvelope }
        let fields = envelope.split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0] == "hpke1", let encapsulatedKey = Data(base64URLEncoded: fields[1]),
            let ciphertext = Data(base64URLEncoded: fields[2])
        else { throw OpenFailure.malformedEnvelope }
        let privateKey = try devicePrivateKey()
        let plaintext: Data
        do {
            var recipient = try HPKE.Recipient(
                privateKey: privateKey, ciphersuite: Self.ciphersuite, info: Self.info,
                encapsulatedKey: encapsulatedKey)
            plaintext = try recipient.open(ciphertext, authenticating: Self.additionalData)
        } catch {
            throw OpenFailure.notAuthentic
        }
        guard let message = try? JSONDecoder().decode(Message.self, from: plaintext), message.type == "message" else {
            throw OpenFailure.notAMessage
        }
        return message
    }

    /// The key the app keeps in the shared keychain group.
    private func devicePrivateKey() throws -> Curve25519.KeyAgreement.PrivateKey {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: Self.keyService,
            kSecAttrAccount as String: Self.keyAccount,
            kSecAttrAccessGroup as String: Self.keychainGroup,
            kSecReturnData as String: true,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess, let data = item as? Data, let text = String(data: data, encoding: .utf8),
            let raw = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
        else {
            log.error("no device key in the keychain: OSStatus \(Int(status), privacy: .public)")
            throw OpenFailure.noKey
        }
        return key
    }

    /// The small picture a message carries inline (a PNG), written to a file to attach.
    private func inlineAttachment(_ png: Data) -> UNNotificationAttachment? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString + ".png")
        do {
            try png.write(to: file)
            return try UNNotificationAttachment(identifier: "image", url: file, options: nil)
        } catch {
            log.error("inline picture not attached: \(String(describing: error), privacy: .public)")
            return nil
        }
    }

    /// The picture at `url`, downloaded and attached; nil when the download fails.
    private func downloadImage(from url: URL, completion: @escaping (UNNotificationAttachment?) -> Void) {
        let task = URLSession.shared.downloadTask(with: url) { location, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard let location = location, error == nil, status == 200 else {
                self.log.error("media download failed (HTTP status \(status))")
                completion(nil)
                return
            }
            // The downloaded file goes when this handler returns: keep it, named as its type so iOS recognizes it.
            let suffix = response?.mimeType.flatMap { UTType(mimeType: $0)?.preferredFilenameExtension }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
                .appendingPathExtension(suffix ?? url.pathExtension)
            do {
                try FileManager.default.moveItem(at: location, to: file)
                completion(try UNNotificationAttachment(identifier: "image", url: file, options: nil))
            } catch {
                self.log.error("media not attached: \(String(describing: error), privacy: .public)")
                completion(nil)
            }
        }
        lock.lock()
        download = task
        lock.unlock()
        task.resume()
    }

    /// The message as Siri and the system see it: from its sender, in its conversation. Donated once per push.
    private func donatedIntent(for message: Message) -> INSendMessageIntent {
        let sender = INPerson(
            personHandle: INPersonHandle(value: message.from, type: .unknown), nameComponents: nil,
            displayName: message.displayName, image: nil, contactIdentifier: nil, customIdentifier: message.from,
            isMe: false, suggestionType: .instantMessageAddress)
        let intent = INSendMessageIntent(
            recipients: nil, outgoingMessageType: .outgoingMessageText, content: message.text,
            speakableGroupName: nil, conversationIdentifier: message.chatRoom ?? message.from, serviceName: nil,
            sender: sender, attachments: nil)
        let interaction = INInteraction(intent: intent, response: nil)
        interaction.direction = .incoming
        interaction.donate { [log] error in
            if let error = error {
                log.error("interaction not donated: \(error.localizedDescription, privacy: .public)")
            }
        }
        return intent
    }

    /// `content` as a communication notification (the sender's name and avatar on iOS); as it is if that fails,
    /// e.g. without the communication entitlement.
    private func communicationNotification(_ content: UNNotificationContent, _ intent: INSendMessageIntent)
        -> UNNotificationContent
    {
        do {
            return try content.updating(from: intent)
        } catch {
            log.error("not a communication notification: \(String(describing: error), privacy: .public)")
            return content
        }
    }

    // MARK: - Delivery

    private func remember(_ content: UNNotificationContent) {
        lock.lock()
        bestAttemptContent = content
        lock.unlock()
    }

    /// Hands `content` to the content handler, once: whichever of the work and the expiry comes first.
    private func finish(with content: UNNotificationContent) {
        lock.lock()
        let handler = contentHandler
        contentHandler = nil
        download = nil
        lock.unlock()
        handler?(content)
    }
}

/// The sealed message: nse's plaintext schema (docs/envelope.md), and this app's own `image`, a small PNG (base64).
struct Message: Decodable {
    let type: String
    let from: String
    let displayName: String?
    let text: String
    let subject: String?
    let chatRoom: String?
    let image: Data?

    enum CodingKeys: String, CodingKey {
        case type, from, text, subject, image
        case displayName = "display_name"
        case chatRoom = "chat_room"
    }
}

/// Why a push's content could not be opened: what the log says, nothing of the content.
enum OpenFailure: String, Error {
    case noEnvelope = "no enc in the payload"
    case malformedEnvelope = "enc is not an hpke1 envelope"
    case noKey = "no device key in the keychain"
    case notAuthentic = "the envelope does not open with this device's key (another key, or tampered)"
    case notAMessage = "the content is not a message"
}

extension Data {
    /// Base64url without padding (RFC 4648, section 5), as the envelope's fields are written.
    init?(base64URLEncoded text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
