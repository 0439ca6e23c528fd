import NSEJSON
import Testing

/// `JSONObject.field`, the one field reader: what it reads, and the one-line errors it gives.
@Suite struct JSONFieldTests {
    enum Shape: String, CaseIterable, JSONConvertible { case circle, square, triangle }

    /// A nested type, read the way the package's types read themselves.
    struct Outer: JSONDecodable, Equatable {
        struct Inner: JSONDecodable, Equatable {
            static var jsonKind: String { "an object" }
            var shape: Shape
            var size: Int

            init(json: JSON) throws(JSONFieldError) {
                let object = try JSONObject(json: json)
                shape = try object.field("shape")
                size = try object.field("size") ?? 1
            }
        }
        static var jsonKind: String { "an object" }
        var name: String
        var inner: Inner
        var note: String?

        init(json: JSON) throws(JSONFieldError) {
            let object = try JSONObject(json: json)
            name = try object.field("name")
            inner = try object.field("inner")
            note = try object.field("note")
        }
    }

    /// The error `Outer` gives for `document`, as it reads.
    func error(_ document: String) throws -> String {
        let json = try JSON.parse(document, options: JSONParseOptions(requireObject: false))
        do { _ = try Outer(json: json) } catch {
            return error.description
        }
        Issue.record("accepted \(document)")
        return ""
    }

    @Test func readsRequiredOptionalAndDefaultedMembers() throws {
        let full = try Outer(json: JSON.parse(#"{"name":"n","inner":{"shape":"square","size":3.0},"note":"x"}"#))
        #expect(full.name == "n" && full.inner.shape == .square && full.inner.size == 3 && full.note == "x")
        let sparse = try Outer(json: JSON.parse(#"{"name":"n","inner":{"shape":"circle","size":null},"note":null}"#))
        #expect(sparse.inner.size == 1 && sparse.note == nil)
        #expect(try Outer(json: JSON.parse(#"{"name":"n","inner":{"shape":"circle"}}"#)).note == nil)
    }

    @Test(arguments: [
        (#"{"inner":{"shape":"circle"}}"#, #""name" must be a string, and is missing"#),
        (#"{"name":1,"inner":{"shape":"circle"}}"#, #""name" must be a string, not a number"#),
        (#"{"name":null,"inner":{"shape":"circle"}}"#, #""name" must be a string, not null"#),
        (#"{"name":"n","inner":[]}"#, #""inner" must be an object, not an array"#),
        (#"{"name":"n","inner":{}}"#, #""inner.shape" must be circle, square or triangle, and is missing"#),
        (#"{"name":"n","inner":{"shape":"hexagon"}}"#, #""inner.shape" must be circle, square or triangle"#),
        (#"{"name":"n","inner":{"shape":true}}"#, #""inner.shape" must be circle, square or triangle, not a boolean"#),
        (#"{"name":"n","inner":{"shape":"circle","size":1.5}}"#, #""inner.size" must be an integer, not a number"#),
        (#"{"name":"n","inner":{"shape":"circle"},"note":{}}"#, #""note" must be a string, not an object"#),
        (#"["name"]"#, "the document must be an object, not an array"),
    ])
    func errorsNameThePathAndTheKind(document: String, message: String) throws {
        #expect(try error(document) == message)
    }

    @Test(arguments: [
        (#"{"a":{"b":{"c":1}}}"#, "1", "1"),
        (#"{"a":{}}"#, "nil", #""a.b" must be an object, and is missing"#),
        (#"{"a":{"b":null}}"#, "nil", #""a.b" must be an object, not null"#),
        (#"{"a":{"b":{"c":null}}}"#, "nil", #""a.b.c" must be an integer, not null"#),
        (#"{"a":{"b":[]}}"#, #""a.b" must be an object, not an array"#, #""a.b" must be an object, not an array"#),
        (#"{"a":"b"}"#, #""a" must be an object, not a string"#, #""a" must be an object, not a string"#),
        (
            #"{"a":{"b":{"c":"1"}}}"#, #""a.b.c" must be an integer, not a string"#,
            #""a.b.c" must be an integer, not a string"#
        ),
    ])
    func nestedPathsReadThroughObjects(document: String, optional: String, required: String) throws {
        let object = try JSONObject(json: JSON.parse(document))
        var optionalRead: String
        do {
            let value: Int? = try object.field("a", "b", "c")
            optionalRead = value.map(String.init) ?? "nil"
        } catch { optionalRead = error.description }
        var requiredRead: String
        do {
            let value: Int = try object.field("a", "b", "c")
            requiredRead = String(value)
        } catch { requiredRead = error.description }
        #expect(optionalRead == optional)
        #expect(requiredRead == required)
    }

    @Test func errorsNeverQuoteAValue() throws {
        let secret = "Lunch at 1?\nnew line"
        let message = try error(JSON.object(["name": "n", "inner": ["shape": .string(secret)]]).serialized())
        #expect(!message.contains("Lunch") && !message.contains("\n"))
    }

    @Test func kindsRoundTrip() throws {
        let object: JSONObject = ["s": "text", "b": true, "i": 42, "d": 2.5, "o": ["k": "v"], "e": "triangle"]
        let json = JSON.object(object)
        let text: String = try object.field("s")
        let flag: Bool = try object.field("b")
        let integer: Int64 = try object.field("i")
        let number: Double = try object.field("i")
        let real: Double = try object.field("d")
        let nested: JSONObject = try object.field("o")
        let shape: Shape = try object.field("e")
        #expect(
            JSON.object([
                "s": text.json, "b": flag.json, "i": integer.json, "d": real.json, "o": nested.json, "e": shape.json,
            ]) == json)
        #expect(number == 42)
        #expect(String?.none.json == .null && Optional("x").json == "x")
        #expect(throws: JSONFieldError(path: ["s"], expected: "an integer", problem: .found("a string"))) {
            let _: Int = try object.field("s")
        }
    }
}
