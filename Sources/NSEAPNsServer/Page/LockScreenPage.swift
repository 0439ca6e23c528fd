import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem

/// The page `nse serve` answers `GET /` with: one phone per served device, drawn as its lock screen, from the
/// results recorded so far (server-rendered, so the list reads without JavaScript), kept live by a little script
/// that follows `/v1/events`. Everything taken from a push is escaped; nothing secret is on it (no key, and no
/// plaintext beyond what the lock screen itself shows).
enum LockScreenPage {
    /// One device and its latest results, newest first.
    struct Phone {
        var device: Device
        var results: [JSON]
        /// Its Live Activities (``LiveActivityCards``), as `live-activities.json` holds them.
        var activities: [LiveActivity] = []
        /// Its Notification Center: which notifications are still there, and the app's badge.
        var center: NotificationCenterLog.State?
    }

    static func render(_ phones: [Phone]) -> String {
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>nse serve: lock screens</title>
            <style>\(LockScreenAssets.css)</style>
            </head><body>
            <header><h1>nse serve</h1><p>The lock screen of each served device, as iOS would show it. Live: new pushes
            appear as they are recorded.</p></header>
            <main id="phones">
            """
        for phone in phones { html += render(phone) }
        html += "</main><script>\(LockScreenAssets.script)</script></body></html>\n"
        return html
    }

    static func render(_ phone: Phone) -> String {
        let config = phone.device.config
        let badge = phone.center?.badge.flatMap { $0 > 0 ? String($0) : nil } ?? ""
        let name = Path.basename(phone.device.directory)
        var html = """
            <section class="phone" data-remote="\(escape(config.remoteToken.lowercased()))" \
            data-voip="\(escape(config.voipToken.lowercased()))" data-topic="\(escape(config.bundleID))">
            <div class="status"><span class="device-name">\(escape(name))</span>\
            <span class="bundle">\(escape(config.bundleID))</span>\
            <span class="entitlements">\(config.filtering ? "filtering" : "no filtering")\
            \(config.online ? "" : " · offline")</span>\
            <span class="app-badge"\(badge.isEmpty ? " hidden" : "")>\(escape(badge))</span></div>
            <div class="clock">\(escape(clock(phone.results.first?["recorded_at"]?.intValue)))</div>
            \(LiveActivityCards.render(phone.activities, now: SystemClock.unixMilliseconds()))\
            <ol class="notifications">
            """
        let token = config.remoteToken.lowercased()
        let cards = cards(phone.results)
        let marks = phone.center.map { standing(cards, center: $0) } ?? [:]
        for group in threads(cards) { html += stack(group, appName: config.bundleID, token: token, marks: marks) }
        html += """
            </ol>
            <form class="send" method="post" action="/3/device/\(escape(config.remoteToken.lowercased()))">
            <label>Send a test push<textarea name="payload" rows="4">\
            {"aps":{"alert":{"title":"Test","body":"Hello from the page"},"mutable-content":1}}</textarea></label>
            <button type="submit">Push</button><output class="answer"></output>
            </form>
            </section>
            """
        return html
    }

    /// The results grouped as iOS stacks them: by `thread-id` (a result without one is alone), each group where its
    /// newest result is, newest first within it.
    static func threads(_ results: [JSON]) -> [[JSON]] {
        var groups: [[JSON]] = []
        var index: [String: Int] = [:]
        for result in results {
            let thread = result["notification"]?["aps"]?["thread-id"]?.stringValue ?? ""
            if !thread.isEmpty, let at = index[thread] {
                groups[at].append(result)
            } else {
                if !thread.isEmpty { index[thread] = groups.count }
                groups.append([result])
            }
        }
        return groups
    }

    /// A thread's stack: its newest notification, and the others folded under "N more" (HTML `<details>`, so it
    /// opens without JavaScript); a notification alone is its card.
    static func stack(_ group: [JSON], appName: String, token: String? = nil, marks: [String: String] = [:])
        -> String
    {
        func card(_ result: JSON) -> String {
            LockScreenPage.card(
                result, appName: appName, token: token, standing: marks[result["apns_id"]?.stringValue ?? ""])
        }
        guard group.count > 1, let newest = group.first else { return group.first.map(card) ?? "" }
        let thread = newest["notification"]?["aps"]?["thread-id"]?.stringValue ?? ""
        var html = "<li class=\"stack\" data-thread=\"\(escape(thread))\"><ol class=\"stack-top\">"
        html += card(newest)
        html += "</ol><details class=\"stack-more\"><summary>\(group.count - 1) more</summary><ol class=\"stacked\">"
        for result in group.dropFirst() { html += card(result) }
        html += "</ol></details></li>"
        return html
    }

    /// The cards of the results (newest first): each push's, then the local notifications its extension showed at
    /// once (`local_notifications`), the last added first.
    static func cards(_ results: [JSON]) -> [JSON] {
        var cards: [JSON] = []
        for result in results {
            cards.append(result)
            let shown = (result["local_notifications"]?.arrayValue ?? []).filter { $0["shown"]?.boolValue == true }
            for (index, local) in shown.enumerated().reversed() { cards.append(localCard(local, index, of: result)) }
        }
        return cards
    }

    /// A local notification an extension showed, as a card of its own: its text, its thread, the push's time; its
    /// `apns_id` the push's, `#`, and its place among the push's (an extension may add one identifier twice).
    static func localCard(_ local: JSON, _ index: Int, of result: JSON) -> JSON {
        let identifier = local["identifier"]?.stringValue ?? ""
        var aps = JSONObject()
        if let thread = local["thread_id"]?.stringValue, !thread.isEmpty { aps["thread-id"] = .string(thread) }
        return [
            "outcome": "local", "identifier": .string(identifier), "display": local["display"] ?? .null,
            "notification": ["aps": .object(aps)], "recorded_at": result["recorded_at"] ?? .null,
            "apns_id": .string((result["apns_id"]?.stringValue ?? "") + "#\(index)"),
            "preview_hidden": local["preview_hidden"] ?? false, "hidden_preview": local["hidden_preview"] ?? .null,
            "actions": local["actions"] ?? .null,
            "reason": "local: added by the extension with UNUserNotificationCenter.add",
        ]
    }

    /// The identifier Notification Center knows a card's notification by: a local notification's own, a push's
    /// `apns-collapse-id` or request id; nil for a card that showed nothing.
    static func centerIdentifier(_ card: JSON) -> String? {
        guard card["display"]?.objectValue != nil else { return nil }
        if card["outcome"]?.stringValue == "local" { return card["identifier"]?.stringValue }
        return card["collapse_id"]?.stringValue ?? card["request_id"]?.stringValue
    }

    /// The cards (newest first) no longer in Notification Center, by `apns_id`: `replaced` by a newer one with its
    /// identifier (an `apns-collapse-id` used again), or `removed` (by the app's extension, or past what it keeps).
    static func standing(_ cards: [JSON], center: NotificationCenterLog.State) -> [String: String] {
        let shown = Set(center.delivered.map(\.identifier))
        var seen = Set<String>()
        var marks: [String: String] = [:]
        for card in cards {
            guard let identifier = centerIdentifier(card), let id = card["apns_id"]?.stringValue else { continue }
            if !seen.insert(identifier).inserted {
                marks[id] = "replaced"
            } else if !shown.contains(identifier) {
                marks[id] = "removed"
            }
        }
        return marks
    }

    /// One recorded result as the lock screen shows it. `token` (the device's remote token) gives the URLs of its
    /// stored files (``AttachmentFiles``): without it the card has no thumbnail and no avatar picture. `standing`
    /// (``standing(_:center:)``) marks one Notification Center no longer shows.
    static func card(_ result: JSON, appName: String, token: String? = nil, standing: String? = nil) -> String {
        let outcome = result["outcome"]?.stringValue ?? "unknown"
        let display = result["display"]
        let aps = result["notification"]?["aps"]
        let thread = aps?["thread-id"]?.stringValue ?? ""
        let time = clock(result["recorded_at"]?.intValue)
        var html = "<li class=\"card outcome-\(escape(outcome))\(standing.map { " \(escape($0))" } ?? "")\" "
        html += "data-thread=\"\(escape(thread))\" data-id=\"\(escape(result["apns_id"]?.stringValue ?? ""))\""
        if let identifier = centerIdentifier(result) {
            html += " data-nc=\"\(escape(identifier))\" data-at=\"\(result["recorded_at"]?.intValue ?? 0)\""
        }
        html += ">"
        if let report = result["call_report"], report.objectValue != nil {
            let name = report["localized_caller_name"]?.stringValue ?? ""
            let caller = name.isEmpty ? report["remote_handle"]?["value"]?.stringValue ?? "Unknown caller" : name
            let video = report["has_video"]?.boolValue ?? false
            html += "<div class=\"call\"><span class=\"call-kind\">\(video ? "Video call" : "Audio call")</span>"
            html += "<span class=\"caller\">\(escape(caller))</span>"
            if let end = result["call"]?["end_reason"]?.stringValue {
                html += "<span class=\"end-reason\">ended: \(escape(end))</span>"
            }
            html += "</div>"
        }
        if let display, display.objectValue != nil {
            // Show Previews hid the content: the app and "Notification", nothing of the sender or the pictures.
            let hidden = result["preview_hidden"]?.boolValue == true
            let conversation = hidden ? nil : Conversation(result["communication"])
            html += conversation == nil ? "<div class=\"banner\">" : "<div class=\"banner communication\">"
            if let conversation { html += avatar(conversation, appName: appName, token: token) }
            html +=
                "<div class=\"text\"><div class=\"app\"><span>\(escape(appName))</span><time>\(escape(time))</time></div>"
            var lines: [(String, String)] = []
            if hidden {
                // "Notification", or the category's placeholder with its title and subtitle when it keeps them.
                let shown = result["hidden_preview"]
                lines.append(("title", shown?["title"]?.stringValue ?? ""))
                lines.append(("subtitle", shown?["subtitle"]?.stringValue ?? ""))
                lines.append(("body", shown?["body"]?.stringValue ?? NotificationPreviews.placeholder))
            } else if let conversation {
                // iOS draws a communication notification with the sender's name in place of the content's title,
                // and a group's name under it (docs/serve.md, "The lock-screen page").
                let title = conversation.sender.isEmpty ? display["title"]?.stringValue ?? "" : conversation.sender
                lines.append(("title", title))
                if let group = conversation.group { lines.append(("subtitle group", group)) }
            } else {
                lines.append(("title", display["title"]?.stringValue ?? ""))
            }
            if !hidden {
                lines.append(("subtitle", display["subtitle"]?.stringValue ?? ""))
                lines.append(("body", display["body"]?.stringValue ?? ""))
            }
            for (field, text) in lines where !text.isEmpty { html += "<div class=\"\(field)\">\(escape(text))</div>" }
            if !hidden, let line = mediaLine(result["attachments"]) {
                html += "<div class=\"media-line\">\(escape(line))</div>"
            }
            if let badge = aps?["badge"]?.intValue { html += "<span class=\"badge\">\(badge)</span>" }
            if hidden { html += "<div class=\"mark hidden-preview\">preview hidden (Show Previews)</div>" }
            switch standing {
            case "removed": html += "<div class=\"mark standing\">removed from Notification Center</div>"
            case "replaced": html += "<div class=\"mark standing\">replaced by a newer one</div>"
            default: break
            }
            switch outcome {
            case "local": html += "<div class=\"mark\">posted by the extension</div>"
            case "fallback": html += "<div class=\"mark\">fallback: the extension could not rewrite it</div>"
            case "original":
                html += "<div class=\"mark\">shown as sent: \(escape(reasonWord(result)))</div>"
            default: break
            }
            html += "</div>"
            if !hidden { html += thumbnail(result["attachments"], token: token) }
            html += "</div>"
            html += actions(result["actions"])
        } else {
            let line: String
            switch outcome {
            case "suppressed": line = "silenced by the extension"
            case "expired": line = "expired: APNs dropped it"
            case "replaced": line = "replaced by a newer push while offline"
            case "rejected": line = "rejected: \(reasonWord(result))"
            case "activity-started": line = "Live Activity started"
            case "activity-updated": line = "Live Activity updated"
            case "activity-ended": line = "Live Activity ended"
            case "activity-ignored": line = "Live Activity push ignored: \(reasonWord(result))"
            case "throttled": line = "Live Activity update throttled: over its budget"
            default: line = outcome
            }
            html += "<div class=\"silent\">\(escape(line)) <time>\(escape(time))</time></div>"
        }
        html += details(result, token: token)
        html += "</li>"
        return html
    }

    /// The category's buttons, as the expanded notification shows them under its content (the page draws them
    /// always; they do nothing): a destructive one in red, a text input's with its button's title.
    static func actions(_ actions: JSON?) -> String {
        let list = actions?.arrayValue ?? []
        guard !list.isEmpty else { return "" }
        var html = "<div class=\"actions\">"
        for action in list {
            let options = (action["options"]?.arrayValue ?? []).compactMap(\.stringValue)
            let classes = (["action"] + options).joined(separator: " ")
            var title = action["title"]?.stringValue ?? ""
            if let button = action["text_input"]?["button_title"]?.stringValue, !button.isEmpty {
                title += " … " + button
            }
            html += "<button type=\"button\" class=\"\(escape(classes))\" disabled>\(escape(title))</button>"
        }
        return html + "</div>"
    }

    /// What a communication notification shows of its sender and conversation (the result's `communication`).
    struct Conversation {
        /// The sender's name, else their handle; empty when the intent named neither.
        var sender: String
        /// The group's name, for a conversation iOS treats as a group: named, with more than one recipient.
        var group: String?
        /// The stored picture iOS shows: the group's when it has one, else the sender's (`INSendMessageIntent`'s
        /// `keyImage()`).
        var picture: String?

        init?(_ communication: JSON?) {
            guard let communication, communication.objectValue != nil else { return nil }
            let name = communication["sender_name"]?.stringValue ?? ""
            sender = name.isEmpty ? communication["sender_handle"]?.stringValue ?? "" : name
            let groupName = communication["group_name"]?.stringValue ?? ""
            let recipients = communication["recipient_count"]?.intValue ?? 0
            group = !groupName.isEmpty && recipients > 1 ? groupName : nil
            func path(_ key: String) -> String? {
                communication[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            }
            picture = (group == nil ? nil : path("group_avatar_path")) ?? path("avatar_path")
        }

        /// A monogram as iOS draws one for a contact without a picture: the first letters of the first and last
        /// words, capitalized; empty when neither starts with a letter (the page then draws a silhouette).
        static func initials(_ name: String) -> String {
            // `isLetter` is Unicode's Alphabetic property of the first scalar, which the script tests too.
            let words = name.split(whereSeparator: \.isWhitespace)
            var letters = ""
            for word in [words.first, words.count > 1 ? words.last : nil] {
                if let first = word?.first, first.isLetter { letters += String(first).uppercased() }
            }
            return letters
        }
    }

    /// The round picture in place of the app icon (the group's or the sender's), badged with a small app icon, as
    /// Apple's Human Interface Guidelines describe a communication notification. The sender's initials lie under the
    /// picture: they show when there is none, or when it does not decode (the script then hides the picture).
    static func avatar(_ conversation: Conversation, appName: String, token: String?) -> String {
        let initials = Conversation.initials(conversation.sender)
        var html = "<div class=\"avatar\">"
        html +=
            initials.isEmpty
            ? "<span class=\"initials silhouette\"></span>"
            : "<span class=\"initials\">\(escape(initials))</span>"
        if let token, let path = conversation.picture, let url = AttachmentFiles.url(token: token, storedPath: path) {
            html += "<img class=\"avatar-picture\" src=\"\(escape(url))\" alt=\"\">"
        }
        html += "<span class=\"app-icon\">\(escape(appInitial(appName)))</span></div>"
        return html
    }

    /// The letter the page's stand-in app icon shows: the first of the bundle identifier's last component.
    static func appInitial(_ bundleID: String) -> String {
        bundleID.split(separator: ".").last?.first.map { String($0).uppercased() } ?? "?"
    }

    /// The first attachment, as iOS shows it on the right of the banner: an image as a thumbnail, audio and movies
    /// as a glyph; nothing when the extension asked for the thumbnail to be hidden.
    static func thumbnail(_ attachments: JSON?, token: String?) -> String {
        guard let first = attachments?.arrayValue?.first, first["thumbnail_hidden"]?.boolValue != true else {
            return ""
        }
        switch first["kind"]?.stringValue {
        case "image":
            guard let token, let path = first["path"]?.stringValue,
                let url = AttachmentFiles.url(token: token, storedPath: path)
            else { return "" }
            return "<img class=\"thumbnail\" src=\"\(escape(url))\" alt=\"\">"
        case "audio": return "<span class=\"thumbnail glyph\" title=\"audio\">\u{266A}</span>"
        case "movie": return "<span class=\"thumbnail glyph\" title=\"movie\">\u{25B6}</span>"
        default: return ""
        }
    }

    /// The line under the text for the first audio or movie attachment: a glyph and how long it plays (`0:07`), the
    /// length read from the file's headers by the host (MediaDuration), or the kind when they did not say.
    static func mediaLine(_ attachments: JSON?) -> String? {
        guard
            let first = attachments?.arrayValue?.first(where: {
                $0["kind"]?.stringValue == "audio" || $0["kind"]?.stringValue == "movie"
            })
        else { return nil }
        let audio = first["kind"]?.stringValue == "audio"
        let glyph = audio ? "\u{266A}" : "\u{25B6}"
        guard let seconds = first["duration"]?.doubleValue else { return "\(glyph) \(audio ? "voice note" : "video")" }
        return "\(glyph) \(MediaDuration.clock(seconds))"
    }

    /// The panel behind a notification: its timeline, the extension's figures, the Call-IDs and the document.
    static func details(_ result: JSON, token: String? = nil) -> String {
        var rows: [(String, String)] = []
        if let queued = result["queued_ms"]?.doubleValue { rows.append(("queued", "\(queued) ms")) }
        let ext = result["extension"]
        if let wall = ext?["wall_ms"]?.doubleValue { rows.append(("extension", "\(wall) ms")) }
        if let peak = ext?["peak_rss_kb"]?.intValue { rows.append(("peak memory", "\(peak) KB")) }
        if let sip = ext?["info"]?["sip_timings"]?.objectValue {
            for (key, value) in sip { rows.append(("SIP " + key.replacingUnderscores, value.serialized())) }
        }
        if let callID = ext?["info"]?["call_id"]?.stringValue { rows.append(("SIP Call-ID", callID)) }
        if ext?["time_will_expire_sent"]?.boolValue == true { rows.append(("expiry notice", "sent")) }
        if let latency = result["latency_ms"]?.doubleValue {
            rows.append(("verdict", "\(latency) ms after acceptance"))
        }
        // The call the push brought, step by step from the push (docs/voip.md).
        for (step, value) in result["call"]?["timeline_ms"]?.objectValue ?? JSONObject() {
            rows.append(("call " + step.replacingUnderscores, value.serialized() + " ms"))
        }
        if let end = result["call"]?["end_reason"]?.stringValue { rows.append(("call ended", end)) }
        if let reason = result["reason"]?.stringValue { rows.append(("reason", reason)) }
        var html = "<details><summary>details</summary>"
        if let name = result["case"]?.stringValue, RecordedCase.isName(name) {
            // Recorded by --record: the case file, to keep as a CI case (docs/replay.md).
            html += "<a class=\"save-case\" href=\"/v1/cases/\(name)\" download=\"\(name).json\">save as case</a>"
        }
        html += "<dl class=\"timeline\">"
        for (name, value) in rows { html += "<dt>\(escape(name))</dt><dd>\(escape(value))</dd>" }
        let document = shortened(linked(result, token: token)).serialized(.pretty)
        html += "</dl><pre class=\"document\">\(escape(document))</pre></details>"
        return html
    }

    /// The document with its stored files' paths (attachments, avatars) as the page's URLs for them, or their
    /// names alone when there is none: the page never shows where the server keeps them.
    static func linked(_ result: JSON, token: String?) -> JSON {
        guard var document = result.objectValue else { return result }
        func link(_ value: JSON?) -> JSON? {
            guard let path = value?.stringValue else { return value }
            return .string(token.flatMap { AttachmentFiles.url(token: $0, storedPath: path) } ?? Path.basename(path))
        }
        if let attachments = document["attachments"]?.arrayValue {
            document["attachments"] = .array(
                attachments.map { item in
                    guard var attachment = item.objectValue else { return item }
                    attachment["path"] = link(attachment["path"])
                    return .object(attachment)
                })
        }
        if var communication = document["communication"]?.objectValue {
            for key in ["avatar_path", "group_avatar_path"] { communication[key] = link(communication[key]) }
            document["communication"] = .object(communication)
        }
        return .object(document)
    }

    /// The document with long opaque strings (an `enc` blob) cut to their first 24 characters.
    static func shortened(_ value: JSON) -> JSON {
        switch value {
        case .string(let text) where text.count > 120 && !text.contains(" "):
            return .string(String(text.prefix(24)) + "…")
        case .object(let object):
            return .object(JSONObject(object.map { (key: $0.key, value: shortened($0.value)) }))
        case .array(let items):
            return .array(items.map(shortened))
        default:
            return value
        }
    }

    /// The machine-readable first word of a reason (never the text after it).
    static func reasonWord(_ result: JSON) -> String {
        let reason = result["reason"]?.stringValue ?? ""
        return String(reason.prefix { $0 != ":" })
    }

    /// HH:MM:SS (UTC) of a Unix-milliseconds time.
    static func clock(_ milliseconds: Int64?) -> String {
        guard let milliseconds else { return "--:--" }
        let seconds = (milliseconds / 1000) % 86_400
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }

    /// Text made safe for HTML content and attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension String {
    fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
}
