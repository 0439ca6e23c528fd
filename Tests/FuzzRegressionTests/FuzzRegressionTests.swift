import Foundation
import NSEFuzzTargets
import Testing

/// Every committed seed and crash reproducer under `fixtures/fuzz/<target>/` (and its `crashers/`), replayed
/// through the same entry points libFuzzer drives (docs/fuzzing.md): none may crash, and none may break an
/// invariant.
@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz")

    /// The corpus files of a target: its seeds and its crashers.
    static func inputs(_ target: FuzzTarget) -> [URL] {
        let folder = root.appendingPathComponent(target.rawValue)
        var files: [URL] = []
        for directory in [folder, folder.appendingPathComponent("crashers")] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let file = directory.appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue
                {
                    files.append(file)
                }
            }
        }
        return files
    }

    @Test(arguments: FuzzTarget.allCases)
    func corpusReplays(_ target: FuzzTarget) throws {
        let files = Self.inputs(target)
        #expect(!files.isEmpty, "no seed corpus in fixtures/fuzz/\(target.rawValue)")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try target.run(bytes) }
        }
    }

    /// Inputs no corpus needs to hold: nothing, one byte of each value, and long runs.
    @Test(arguments: FuzzTarget.allCases)
    func edgeInputs(_ target: FuzzTarget) {
        var inputs: [[UInt8]] = [[], Array(repeating: 0x0A, count: 70_000), Array(repeating: 0, count: 5121)]
        for byte in 0...255 { inputs.append([UInt8(byte)]) }
        for input in inputs {
            #expect(throws: Never.self, "\(input.count) bytes") { try target.run(input) }
        }
    }
}
