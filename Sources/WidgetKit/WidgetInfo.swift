public import Intents

/// One widget the user installed: its kind, family and, for an intent-configured one, its intent.
public struct WidgetInfo: @unchecked Sendable, CustomDebugStringConvertible {
    public let kind: String
    public let family: WidgetFamily
    public let configuration: INIntent?

    public var debugDescription: String { "WidgetInfo(kind: \(kind), family: \(family))" }
}
