import NSEJSON
import Testing

@Suite struct JSONTests {
    @Test func keepsKeyOrderAndNumberKinds() throws {
        let value = try JSON.parse(#"{"b":1,"a":2.5,"c":[true,null,"x"]}"#)
        #expect(value.objectValue?.keys == ["b", "a", "c"])
        #expect(value["b"] == .int(1))
        #expect(value["a"] == .double(2.5))
        #expect(value.serialized() == #"{"b":1,"a":2.5,"c":[true,null,"x"]}"#)
    }

    @Test func duplicateKeyNamesKeyLineAndColumn() {
        #expect {
            try JSON.parse("{\n  \"aps\": {},\n  \"aps\": 1\n}")
        } throws: { error in
            guard let error = error as? JSONError else { return false }
            return error.code == .duplicateKey && error.line == 3 && error.description.contains("aps")
        }
    }

    @Test func syntaxErrorNamesLineAndColumn() {
        #expect {
            try JSON.parse("{\"a\": 1,\n \"b\": }")
        } throws: { error in
            guard let error = error as? JSONError else { return false }
            return error.code == .syntax && error.line == 2 && error.column > 0 && error.description.contains("line 2")
        }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: JSONError.self) { try JSON.parse(bytes) }
        do { _ = try JSON.parse(bytes) } catch { #expect(error.code == .invalidUTF8) }
    }

    @Test func boundsNesting() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        do {
            _ = try JSON.parse("{\"a\":\(deep)}", options: JSONParseOptions(maxDepth: 32))
            Issue.record("accepted 41 levels")
        } catch {
            #expect(error.code == .tooDeep)
            #expect(error.column == 37)
        }
        #expect((try? JSON.parse("{\"a\":[[1]]}", options: JSONParseOptions(maxDepth: 3))) != nil)
    }

    @Test(arguments: ["", "   \n", "[1,2]", "\"text\"", "12"])
    func rejectsEmptyAndNonObjects(document: String) {
        #expect(throws: JSONError.self) { try JSON.parse(document) }
    }

    @Test func serializerEscapes() throws {
        let value: JSON = ["text": "quote \" backslash \\ newline \n tab \t bell \u{07} é 🎉"]
        let text = value.serialized()
        #expect(text == #"{"text":"quote \" backslash \\ newline \n tab \t bell \u0007 é 🎉"}"#)
        #expect(try JSON.parse(text) == value)
    }

    @Test func objectsCompareWithoutOrder() {
        let a: JSON = ["x": 1, "y": ["z": true]]
        let b: JSON = ["y": ["z": true], "x": 1]
        #expect(a == b)
        #expect(a != ["x": 1, "y": ["z": false]])
    }
}
