import NSEDevice
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// The device's attachment store, `DIR/attachments/<request>/`: where a delivered notification's files go once the
/// extension is done, checked again as iOS validates a remote notification's attachments after its extension
/// finishes (`UNNotificationAttachment`'s rules: a readable file, a supported type, its kind's size limit), then moved
/// there: the extension's copy is gone, as on iOS.
struct AttachmentStore {
    let device: Device
    let requestID: String

    var folder: String { Path.join(device.directory, "attachments", requestID) }

    /// An attachment as the result records it.
    struct Stored: Sendable, Equatable {
        var identifier: String
        var type: String
        var kind: String
        var size: Int64
        var path: String
        var thumbnailHidden: Bool
        /// Seconds, for audio and movies whose headers say (MediaDuration): the lock screen's voice-note line.
        var duration: Double?

        var json: JSON {
            var object: JSONObject = [
                "identifier": .string(identifier), "type": .string(type), "kind": .string(kind), "size": .int(size),
                "path": .string(path), "thumbnail_hidden": .bool(thumbnailHidden),
            ]
            if let duration { object["duration"] = .double((duration * 100).rounded() / 100) }
            return .object(object)
        }
    }

    /// Takes the files that pass; a refused one is left where it was and named in `warnings` with iOS's error code.
    func take(_ attachments: [DeliveredAttachment], warnings: inout [String]) -> [Stored] {
        var stored: [Stored] = []
        for (index, attachment) in attachments.enumerated() {
            switch check(attachment) {
            case .failure(let refusal):
                warnings.append(
                    "attachment \(index) (\(String(attachment.identifier.prefix(64)))) not shown: \(refusal)")
            case .success(let (type, kind, size)):
                let name = "\(index)-\(Path.basename(attachment.path))"
                let destination = Path.join(folder, name)
                do {
                    try FileSystem.createDirectory(folder)
                    try Self.move(attachment.path, to: destination)
                    stored.append(
                        Stored(
                            identifier: attachment.identifier, type: attachment.type, kind: kind.rawValue, size: size,
                            path: destination, thumbnailHidden: attachment.thumbnailHidden,
                            duration: kind == .image ? nil : Self.duration(destination, type: type, size: size)))
                } catch {
                    warnings.append(
                        "attachment \(index) not shown: UNErrorDomain 104 attachmentMoveIntoDataStoreFailed (\(error.description))"
                    )
                }
            }
        }
        return stored
    }

    /// A file where the process said, of a type and a size iOS takes.
    private func check(_ attachment: DeliveredAttachment) -> Result<(String, AttachmentKind, Int64), Refusal> {
        var info = stat()
        guard attachment.path.hasPrefix("/"), stat(attachment.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG
        else { return .failure(.invalidURL) }
        let suffix = Path.fileExtension(attachment.path)
        guard let (type, kind) = AttachmentKind.recognize(hint: attachment.type, pathExtension: suffix) else {
            return .failure(.unrecognizedType)
        }
        guard Int(info.st_size) <= kind.maximumBytes else { return .failure(.invalidFileSize) }
        return .success((type, kind, Int64(info.st_size)))
    }

    /// How long a stored audio or movie file plays, from its headers; nil when they do not say.
    static func duration(_ path: String, type: String, size: Int64) -> Double? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return MediaDuration.seconds(type: type, size: Int(size)) { offset, count in
            (try? FileSystem.readBytes(fd: fd, at: offset, count: count)) ?? []
        }
    }

    /// Why iOS would not show an attachment: UNError's codes.
    enum Refusal: Error, CustomStringConvertible {
        case invalidURL, unrecognizedType, invalidFileSize

        var description: String {
            switch self {
            case .invalidURL: "UNErrorDomain 100 attachmentInvalidURL (the file is gone or not a file)"
            case .unrecognizedType: "UNErrorDomain 101 attachmentUnrecognizedType"
            case .invalidFileSize: "UNErrorDomain 102 attachmentInvalidFileSize (over its kind's limit)"
            }
        }
    }

    /// Renames the file, or copies it and removes the original across file systems.
    static func move(_ source: String, to destination: String) throws(SystemError) {
        if rename(source, destination) == 0 { return }
        guard errno == EXDEV else { throw SystemError.current("rename", path: source) }
        guard let bytes = try FileSystem.readFile(source, limit: 64 << 20) else {
            throw SystemError(errnoCode: EFBIG, operation: "read", path: source)
        }
        try FileSystem.writeAtomically(destination, bytes)
        try FileSystem.remove(source)
    }
}

/// What a communication notification shows, as the result records it (`communication`): the sender, the
/// conversation and where their avatars went in the attachment store.
enum CommunicationRecord {
    /// With the communication-notifications entitlement, the context and its avatars moved into `store`; without it,
    /// nil and a warning: iOS shows the notification as an ordinary one, without a word to the app.
    static func record(
        _ communication: DeliveredCommunication?, device: Device, store: AttachmentStore, warnings: inout [String]
    ) -> JSON? {
        guard let communication else { return nil }
        guard device.config.communication else {
            warnings.append(
                "communication notification shown as an ordinary one: the app lacks com.apple.developer.usernotifications.communication"
            )
            return nil
        }
        func keep(_ path: String?, _ name: String) -> String? {
            guard let path, path.hasPrefix("/"), FileSystem.exists(path) else { return nil }
            let destination = Path.join(store.folder, name)
            do {
                try FileSystem.createDirectory(store.folder)
                try AttachmentStore.move(path, to: destination)
                return destination
            } catch {
                return nil
            }
        }
        let avatar = keep(communication.avatarPath, "avatar")
        let groupAvatar = keep(communication.groupAvatarPath, "group-avatar")
        return [
            "intent": .string(communication.intent), "sender_name": .string(communication.senderName),
            "sender_handle": communication.senderHandle.json,
            "sender_handle_type": .string(communication.senderHandleType), "has_avatar": .bool(avatar != nil),
            "avatar_path": avatar.json, "group_name": communication.groupName.json,
            "group_avatar_path": groupAvatar.json,
            "conversation_identifier": communication.conversationIdentifier.json,
            "recipient_count": .int(communication.recipientCount), "service_name": communication.serviceName.json,
        ]
    }
}
