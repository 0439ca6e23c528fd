import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Runs the built `nse` on every payload in fixtures/payloads and compares the result with expected.json.
/// Envelopes are sealed at test time (`"@seal:NAME"` → fixtures/plaintexts/NAME.json sealed to the device,
/// `"@seal-other:NAME"` → sealed to another device), so no key is committed.
@Suite(.serialized) struct FixturePayloadTests {
    static let payloadDirectory = TestSupport.fixtures + "/payloads"
    static let expectations: JSONObject = {
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: payloadDirectory + "/expected.json"))) ?? Data()
        return (try? JSON.parse(Array(bytes)))?.objectValue ?? JSONObject()
    }()

    static let workspace: (device: String, other: String) = {
        let root = (try? TestSupport.temporaryDirectory("nse-e2e")) ?? "/tmp/nse-e2e"
        _ = try? TestSupport.nse(["device", "init", root + "/bob", "--filtering"])
        _ = try? TestSupport.nse(["device", "init", root + "/eve"])
        return (root + "/bob", root + "/eve")
    }()

    static func materialize(_ name: String) throws -> String {
        var data = try Data(contentsOf: URL(fileURLWithPath: payloadDirectory + "/" + name))
        guard var text = String(data: data, encoding: .utf8), text.contains("\"@seal") else {
            let path = try TestSupport.temporaryDirectory() + "/" + name
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }
        for (marker, device) in [("@seal-other:", workspace.other), ("@seal:", workspace.device)] {
            while let range = text.range(of: "\"" + marker) {
                let nameStart = text.index(range.lowerBound, offsetBy: marker.count + 1)
                let nameEnd = text[nameStart...].firstIndex(of: "\"")!
                let plaintext = try String(contentsOfFile: TestSupport.fixtures + "/plaintexts/" + text[nameStart..<nameEnd] + ".json", encoding: .utf8)
                let sealed = try TestSupport.nse(["seal", "--device", device], stdin: plaintext)
                #expect(sealed.status == 0, "\(sealed.stderr)")
                text.replaceSubrange(range.lowerBound...nameEnd, with: "\"" + sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "\"")
            }
        }
        data = Data(text.utf8)
        let path = try TestSupport.temporaryDirectory() + "/" + name
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func everyFixtureHasAnExpectation() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.payloadDirectory).filter { $0 != "expected.json" }
        #expect(Set(files) == Set(Self.expectations.keys))
        #expect(files.count >= 15)
    }

    @Test(arguments: expectations.keys.sorted())
    func fixture(name: String) throws {
        let expected = try #require(Self.expectations[name])
        let path = try Self.materialize(name)
        let output = try TestSupport.nse(["run", "--device", Self.workspace.device, path])
        #expect(Int64(output.status) == expected["exit"]?.intValue, "\(name): \(output.stderr)")
        let result = try JSON.parse(output.stdout)
        #expect(result["outcome"] == expected["outcome"], "\(name): \(result["reason"] ?? .null)")
        let reason = result["reason"]?.stringValue ?? ""
        #expect(reason.contains(expected["reason"]?.stringValue ?? "\u{0}"), "\(name): \(reason)")
        if let display = expected["display"] {
            #expect(result["display"] == display, "\(name)")
        }
        if let stderr = expected["stderr"]?.stringValue {
            #expect(output.stderr.contains(stderr), "\(name): \(output.stderr)")
            #expect(output.stderr.split(separator: "\n").count == 1, "\(name): one-line error")
        }
        if output.status == 0 { #expect(output.stderr.isEmpty, "\(name): \(output.stderr)") }
    }
}
