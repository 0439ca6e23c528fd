public import Foundation

/// CoreGraphics' dictionary form of a rectangle, which Apple documents as the value of
/// `UNNotificationAttachmentOptionsThumbnailClippingRectKey` (`rect.dictionaryRepresentation`). Foundation on Linux
/// has `CGRect` and not this; here it is, in the module the option is used with (a `CFDictionary` is an
/// `NSDictionary` in nse's SDK).
extension CGRect {
    /// `X`, `Y`, `Width` and `Height`, as CoreGraphics writes them.
    public var dictionaryRepresentation: NSDictionary {
        [
            "X": NSNumber(value: Double(origin.x)), "Y": NSNumber(value: Double(origin.y)),
            "Width": NSNumber(value: Double(size.width)), "Height": NSNumber(value: Double(size.height)),
        ]
    }

    /// The rectangle of such a dictionary; nil when a key is missing or not a number.
    public init?(dictionaryRepresentation dict: NSDictionary) {
        func number(_ key: String) -> Double? { (dict[key] as? NSNumber)?.doubleValue }
        guard let x = number("X"), let y = number("Y"), let width = number("Width"), let height = number("Height")
        else { return nil }
        self.init(x: x, y: y, width: width, height: height)
    }
}
