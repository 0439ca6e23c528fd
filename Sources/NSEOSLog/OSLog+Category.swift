extension OSLog {
    /// The categories Apple reserves for Instruments (iOS 12). A handle of `pointsOfInterest` is written as any other,
    /// under the category `PointsOfInterest`; the two dynamic-tracing ones are written only while Instruments traces
    /// on Apple's systems, which is never here: their handles write nothing, as `OSLog.disabled`.
    public struct Category: Sendable, Hashable, RawRepresentable {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        public static let pointsOfInterest = Category(rawValue: "PointsOfInterest")
        public static let dynamicTracing = Category(rawValue: "DynamicTracing")
        public static let dynamicStackTracing = Category(rawValue: "DynamicStackTracing")
    }

    public convenience init(subsystem: String, category: Category) {
        self.init(
            subsystem: subsystem, category: category.rawValue,
            isWritten: category != .dynamicTracing && category != .dynamicStackTracing)
    }
}
