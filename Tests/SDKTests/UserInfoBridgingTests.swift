import Foundation
import NSEExtensionKit
import NSEJSON
import Testing

/// A push's `userInfo` answers casts as iOS's `JSONSerialization` objects do: by value, whatever the JSON wrote.
@Suite struct UserInfoBridgingTests {
    private func userInfo(_ text: String) throws -> [String: Any] {
        PropertyListJSON.dictionary(try JSON.parse(text).objectValue ?? [:])
    }

    @Test func numbersAnswerEveryNumericCast() throws {
        let info = try userInfo(#"{"ts": 1700000000, "ratio": 0.5, "count": 3}"#)
        #expect(info["ts"] as? Double == 1_700_000_000)
        #expect(info["ts"] as? Int == 1_700_000_000)
        #expect(info["ts"] as? Int64 == 1_700_000_000)
        #expect(info["ts"] as? UInt == 1_700_000_000)
        #expect(info["count"] as? Int32 == 3)
        #expect(info["count"] as? Float == 3)
        #expect(info["ratio"] as? Double == 0.5)
        #expect(info["ratio"] as? NSNumber == NSNumber(value: 0.5))
        // What iOS refuses too: a fraction as an integer, a number as a string, a number too big for the type.
        #expect(info["ratio"] as? Int == nil)
        #expect(info["ts"] as? String == nil)
        #expect(info["ts"] as? Int16 == nil)
    }

    @Test func zeroAndOneAreBooleansAndBooleansAreNumbers() throws {
        let info = try userInfo(#"{"flag": 1, "off": 0, "two": 2, "muted": true}"#)
        #expect(info["flag"] as? Bool == true)
        #expect(info["off"] as? Bool == false)
        #expect(info["two"] as? Bool == nil)
        #expect(info["muted"] as? Bool == true)
        #expect(info["muted"] as? Int == 1)
    }

    @Test func collectionsOfNumbersCastElementWise() throws {
        let info = try userInfo(#"{"ids": [1, 2], "aps": {"badge": 4, "content-available": 1}}"#)
        #expect(info["ids"] as? [Double] == [1, 2])
        #expect(info["ids"] as? [Int] == [1, 2])
        let aps = try #require(info["aps"] as? [String: Any])
        #expect(aps["badge"] as? Int == 4)
        #expect((info["aps"] as? [String: Int])?["content-available"] == 1)
    }

    /// Written back, each value keeps its JSON type: an integer stays an integer, a boolean a boolean, a whole
    /// double a double; what the extension stored as Swift values is encoded by its type as before.
    @Test func valuesGoBackToTheirJSONType() throws {
        let text = #"{"a": 1, "b": true, "c": 2.0, "d": 1.5, "e": [0, false], "f": null, "g": "x"}"#
        let original = try JSON.parse(text)
        let info = try userInfo(text)
        #expect(PropertyListJSON.json(info) == original)
        let swift: [String: Any] = ["i": 1, "b": true, "d": 2.5, "u": UInt64(7), "big": NSNumber(value: UInt64.max)]
        let encoded = try #require(PropertyListJSON.json(swift))
        #expect(encoded["i"] == .int(1) && encoded["b"] == .bool(true) && encoded["d"] == .double(2.5))
        #expect(encoded["u"] == .int(7))
        // Past Int64, as JSONSerialization writes it: the number, not a wrapped negative.
        #expect(encoded["big"] == .double(Double(UInt64.max)))
        #expect(PropertyListJSON.json(["n": NSNumber(value: Double.nan)]) == nil)
    }

    /// A VoIP payload may hold any property-list value (Element X passes a `Date`); the app gets it as JSON, a date as
    /// ISO 8601 text and data as base64. A content's `userInfo` still refuses them (it goes back as JSON, and a date
    /// read back as text would not be the `Date` the extension wrote).
    @Test func datesAndDataTravelAsTextInAVoIPPayload() throws {
        let payload: [AnyHashable: Any] = [
            "expirationDate": Date(timeIntervalSince1970: 1_700_000_000.25), "nonce": Data([1, 2, 3]),
            "list": [Date(timeIntervalSince1970: 0)],
        ]
        let encoded = try #require(PropertyListJSON.json(payload, datesAndData: .text))
        #expect(encoded["expirationDate"] == "2023-11-14T22:13:20.250Z")
        #expect(encoded["nonce"] == "AQID")
        #expect(encoded["list"]?.arrayValue == ["1970-01-01T00:00:00.000Z"])
        #expect(PropertyListJSON.json(payload) == nil)
        #expect(PropertyListJSON.json(["when": Date()] as [String: Any]) == nil)
    }
}
