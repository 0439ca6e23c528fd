import Foundation
import NSEExtensionKit
import NSEJSON
import NSEProtocol
import NSESystem

/// The content an extension hands to its content handler, as the host reads it: APNs-shaped (`aps` and the
/// user-info keys), with its attachments and, for a communication notification, its sender and conversation.
enum ContentEncoding {
    /// The content handed over; a communication notification's avatars written to files in `scratch` (nil: its
    /// sender and conversation left out).
    static func delivered(_ content: UNNotificationContent, scratch: String?) -> DeliveredContent {
        var aps = JSONObject()
        var alert = JSONObject()
        if !content.title.isEmpty { alert["title"] = .string(content.title) }
        if !content.subtitle.isEmpty { alert["subtitle"] = .string(content.subtitle) }
        if !content.body.isEmpty { alert["body"] = .string(content.body) }
        if !content.launchImageName.isEmpty { alert["launch-image"] = .string(content.launchImageName) }
        // Grouped notifications' summary (iOS 12), alert keys as APNs has them.
        if !content.summaryArgument.isEmpty { alert["summary-arg"] = .string(content.summaryArgument) }
        if content.summaryArgumentCount != 1 {
            alert["summary-arg-count"] = .int(Int64(content.summaryArgumentCount))
        }
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let badge = content.badge { aps["badge"] = .int(badge.int64Value) }
        if let sound = content.sound { aps["sound"] = json(sound) }
        if !content.threadIdentifier.isEmpty { aps["thread-id"] = .string(content.threadIdentifier) }
        if !content.categoryIdentifier.isEmpty { aps["category"] = .string(content.categoryIdentifier) }
        if let target = content.targetContentIdentifier { aps["target-content-id"] = .string(target) }
        if content.interruptionLevel != .active {
            aps["interruption-level"] = .string(content.interruptionLevel.apsValue)
        }
        if content.relevanceScore != 0 { aps["relevance-score"] = .double(content.relevanceScore) }
        if let criteria = content.filterCriteria { aps["filter-criteria"] = .string(criteria) }
        var document = JSONObject()
        var dropped: [String] = []
        for (key, value) in content.userInfo {
            // A key that is not a string (`userInfo[42]`) has no JSON form either: named by its description.
            guard let name = key.base as? String else {
                dropped.append(String(describing: key.base))
                continue
            }
            guard name != "aps" else { continue }
            if let converted = PropertyListJSON.json(value) { document[name] = converted } else { dropped.append(name) }
        }
        document["aps"] = .object(aps)
        var notes = RequestNotes.take()
        if !dropped.isEmpty {
            // Keys named, never their values.
            notes["user_info_not_json"] = .array(dropped.sorted().map(JSON.string))
        }
        let info = notes.isEmpty ? nil : notes
        let attachments = content.attachments.map { attachment in
            DeliveredAttachment(
                identifier: attachment.identifier, path: attachment.url.path, type: attachment.type,
                thumbnailHidden: attachment.thumbnailHidden)
        }
        return DeliveredContent(
            content: document, info: info, attachments: attachments,
            communication: scratch.flatMap { scratch in
                content.storage.communication.map { communication($0, scratch: scratch) }
            })
    }

    private static func json(_ sound: UNNotificationSound) -> JSON {
        switch sound.kind {
        case .default: return "default"
        case .ringtone: return ["ringtone": 1, "name": "default"]
        case .named(let name): return .string(name)
        case .namedRingtone(let name): return ["ringtone": 1, "name": .string(name)]
        case .critical(let name, let volume):
            var object: JSONObject = ["critical": 1, "name": .string(name ?? "default")]
            if let volume { object["volume"] = .double(Double(volume)) }
            return .object(object)
        }
    }

    /// The sender and conversation; the avatars written to files in `scratch` for the host to take.
    private static func communication(_ context: CommunicationContext, scratch: String) -> DeliveredCommunication {
        func write(_ data: Data?, _ name: String) -> String? {
            guard let data, !data.isEmpty else { return nil }
            try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            let path = Path.join(scratch, "\(name)-\(UUID().uuidString)")
            return FileManager.default.createFile(atPath: path, contents: data) ? path : nil
        }
        return DeliveredCommunication(
            intent: context.intent, senderName: context.senderName, senderHandle: context.senderHandle,
            senderHandleType: context.senderHandleType, avatarPath: write(context.avatar, "avatar"),
            groupName: context.groupName, groupAvatarPath: write(context.groupAvatar, "group-avatar"),
            conversationIdentifier: context.conversationIdentifier, recipientCount: Int64(context.recipientCount),
            serviceName: context.serviceName)
    }
}
