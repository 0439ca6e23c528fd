/// What a person reads on the lock screen.
public struct Display: Sendable, Equatable {
    public var title: String
    public var subtitle: String
    public var body: String

    public init(title: String = "", subtitle: String = "", body: String = "") {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }

    /// Whether any of the three lines has text: iOS shows an alert only then.
    public var hasText: Bool { !(title.isEmpty && subtitle.isEmpty && body.isEmpty) }

    /// Renders an alert as iOS does: a `*-loc-key` is looked up in the app's strings and its `*-loc-args`
    /// substituted, taking precedence over the literal text.
    public init(alert: APS.Alert, strings: StringsTable) {
        switch alert {
        case .none:
            self.init()
        case .text(let body):
            self.init(body: body)
        case .fields(let fields):
            func render(_ key: String?, _ arguments: [String]?, _ literal: String?) -> String {
                if let key, !key.isEmpty { return strings.localized(key, arguments: arguments ?? []) }
                return literal ?? ""
            }
            self.init(
                title: render(fields.titleLocKey, fields.titleLocArgs, fields.title),
                subtitle: render(fields.subtitleLocKey, fields.subtitleLocArgs, fields.subtitle),
                body: render(fields.locKey, fields.locArgs, fields.body))
        }
    }
}
