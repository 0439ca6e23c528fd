import Foundation
public import NSEJSON

/// nse's JSON as the property-list values Apple's APIs hand out (`userInfo`, a VoIP payload), and back.
///
/// A push's `userInfo` on iOS holds what `JSONSerialization` makes: `NSString`, `NSNumber` (booleans too), arrays,
/// dictionaries and `NSNull`. Numbers and booleans are `NSNumber` here as well, because extensions read them with
/// whatever cast suits them and iOS answers by value, not by JSON type: `userInfo["ts"] as? Double` of `1700000000`,
/// `["flag"] as? Bool` of `1`, `as? UInt`, `as? Float`, `[1, 2] as? [Double]`; a Swift `Int` would refuse all of those.
public enum PropertyListJSON {
    public static func value(_ json: JSON) -> Any {
        switch json {
        case .null: return NSNull()
        case .bool(let value): return NSNumber(value: value)
        case .int(let value): return NSNumber(value: value)
        case .double(let value): return NSNumber(value: value)
        case .string(let value): return value
        case .array(let values): return values.map(value)
        case .object(let object): return dictionary(object)
        }
    }

    public static func dictionary(_ object: JSONObject) -> [String: Any] {
        var result: [String: Any] = [:]
        for (key, member) in object { result[key] = value(member) }
        return result
    }

    /// What `json` makes of the property-list types JSON has no form for, `Date` and `Data`.
    public enum DatesAndData: Sendable {
        /// nil: the caller drops the value and names it (a content's `userInfo`, which goes back as JSON).
        case refused
        /// A date's ISO 8601 text (UTC, milliseconds), data's base64: a VoIP payload, which iOS hands to the app as a
        /// property list and nse's app as JSON.
        case text
    }

    /// The JSON form of a property-list value; nil for what JSON cannot hold (an object, a non-finite number, and
    /// `Date` or `Data` unless `datesAndData` says `.text`), which the caller drops and names.
    public static func json(_ value: Any, datesAndData: DatesAndData = .refused) -> JSON? {
        // An NSNumber first, by its own type: a cast would bridge it (`NSNumber(1) as? Bool` is true).
        if type(of: value) is NSNumber.Type, let value = value as? NSNumber { return number(value) }
        switch value {
        case is NSNull: return .null
        case let value as Bool: return .bool(value)
        case let value as String: return .string(value)
        case let value as Int: return .int(Int64(value))
        case let value as Int64: return .int(value)
        case let value as Int32: return .int(Int64(value))
        case let value as UInt: return .int(Int64(clamping: value))
        case let value as Double: return value.isFinite ? .double(value) : nil
        case let value as Float: return value.isFinite ? .double(Double(value)) : nil
        case let value as NSNumber: return number(value)
        case let value as NSString: return .string(String(describing: value))
        case let value as Date where datesAndData == .text:
            return .string(value.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        case let value as Data where datesAndData == .text: return .string(value.base64EncodedString())
        case let values as [Any]:
            var items: [JSON] = []
            for item in values {
                guard let converted = json(item, datesAndData: datesAndData) else { return nil }
                items.append(converted)
            }
            return .array(items)
        case let values as [AnyHashable: Any]:
            var object = JSONObject()
            for (key, member) in values {
                guard let name = key.base as? String, let converted = json(member, datesAndData: datesAndData)
                else { return nil }
                object[name] = converted
            }
            return .object(object)
        default:
            return nil
        }
    }

    private static func number(_ value: NSNumber) -> JSON? {
        // The type encoding says what the number was made from ("c" a Bool, as on Apple's platforms).
        switch String(cString: value.objCType) {
        case "c" where value.int64Value == 0 || value.int64Value == 1: return .bool(value.boolValue)
        case "f", "d": return value.doubleValue.isFinite ? .double(value.doubleValue) : nil
        case "Q", "L":
            let unsigned = value.uint64Value
            return unsigned <= UInt64(Int64.max) ? .int(Int64(unsigned)) : .double(value.doubleValue)
        default: return .int(value.int64Value)
        }
    }
}
