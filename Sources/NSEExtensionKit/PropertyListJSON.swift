import Foundation
public import NSEJSON

/// nse's JSON as the property-list values Apple's APIs hand out (`userInfo`, a VoIP payload), and back.
///
/// A push's `userInfo` on iOS holds strings, numbers, arrays, dictionaries and null; here they are Swift's own types
/// (`String`, `Int`, `Double`, `Bool`, `[Any]`, `[String: Any]`, `NSNull`), which the usual casts read as on iOS
/// (`userInfo["call-id"] as? String`, `aps["badge"] as? Int`, `as? NSNumber`).
public enum PropertyListJSON {
    public static func value(_ json: JSON) -> Any {
        switch json {
        case .null: return NSNull()
        case .bool(let value): return value
        case .int(let value): return Int(value)
        case .double(let value): return value
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

    /// The JSON form of a property-list value; nil for what JSON cannot hold (`Data`, `Date`, an object), which
    /// the caller drops and names.
    public static func json(_ value: Any) -> JSON? {
        switch value {
        case is NSNull: return .null
        case let value as Bool where type(of: value) == Bool.self: return .bool(value)
        case let value as String: return .string(value)
        case let value as Int: return .int(Int64(value))
        case let value as Int64: return .int(value)
        case let value as Int32: return .int(Int64(value))
        case let value as UInt: return .int(Int64(clamping: value))
        case let value as Double: return value.isFinite ? .double(value) : nil
        case let value as Float: return value.isFinite ? .double(Double(value)) : nil
        case let value as NSNumber: return number(value)
        case let value as NSString: return .string(String(describing: value))
        case let values as [Any]:
            var items: [JSON] = []
            for item in values {
                guard let converted = json(item) else { return nil }
                items.append(converted)
            }
            return .array(items)
        case let values as [AnyHashable: Any]:
            var object = JSONObject()
            for (key, member) in values {
                guard let name = key.base as? String, let converted = json(member) else { return nil }
                object[name] = converted
            }
            return .object(object)
        default:
            return nil
        }
    }

    private static func number(_ value: NSNumber) -> JSON {
        // A Bool made an NSNumber says so by its type encoding ("c", as on Apple's platforms).
        if String(cString: value.objCType) == "c", value.int64Value == 0 || value.int64Value == 1 {
            return .bool(value.boolValue)
        }
        let double = value.doubleValue
        if double == double.rounded(), abs(double) < 9e15 { return .int(value.int64Value) }
        return .double(double)
    }
}
