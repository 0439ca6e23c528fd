import NSEDevice
import NSEJSON

/// A phone's Live Activities on the lock-screen page, above its notifications as iOS puts them: each one's attributes
/// type, its content state as `key value` lines, and marks for stale and ended (ended ones until they are dismissed),
/// the most relevant first. Drawn by the server from `live-activities.json` when the page is asked for.
enum LiveActivityCards {
    /// The activities still on the lock screen at `now` (Unix milliseconds): relevance score first, then the newest.
    static func shown(_ activities: [LiveActivity], now: Int64) -> [LiveActivity] {
        activities.filter { $0.phase(at: now) != .dismissed }.sorted {
            let (left, right) = ($0.relevanceScore ?? 0, $1.relevanceScore ?? 0)
            return left != right ? left > right : $0.startedAt > $1.startedAt
        }
    }

    static func render(_ activities: [LiveActivity], now: Int64) -> String {
        let shown = shown(activities, now: now)
        guard !shown.isEmpty else { return "" }
        let escape = LockScreenPage.escape
        var html = "<ol class=\"activities\">"
        for activity in shown {
            let phase = activity.phase(at: now)
            html += "<li class=\"activity phase-\(phase.rawValue)\" data-activity=\"\(escape(activity.id))\">"
            html +=
                "<div class=\"activity-head\"><span class=\"activity-type\">\(escape(activity.attributesType))</span>"
            let mark =
                switch phase {
                case .active: "live"
                case .stale: "stale"
                case .ended, .dismissed: "ended"
                }
            html += "<span class=\"activity-phase\">\(mark)</span></div><dl class=\"content-state\">"
            for (key, value) in activity.contentState {
                html += "<dt>\(escape(key))</dt><dd>\(escape(Self.text(value)))</dd>"
            }
            html += "</dl><div class=\"activity-meta\">"
            var notes: [String] = []
            if let channel = activity.channelID { notes.append("channel \(channel)") }
            if phase == .stale, let stale = activity.staleDate {
                notes.append("stale since \(LockScreenPage.clock(stale * 1000))")
            }
            if phase == .ended, let dismissal = activity.dismissal(at: now) {
                notes.append("until \(LockScreenPage.clock(dismissal))")
            }
            notes.append("\(activity.pushes) push\(activity.pushes == 1 ? "" : "es")")
            html += escape(notes.joined(separator: " · ")) + "</div></li>"
        }
        return html + "</ol>"
    }

    /// A content-state value as one line: a string as it is, anything else as JSON.
    static func text(_ value: JSON) -> String {
        value.stringValue ?? value.serialized()
    }
}
