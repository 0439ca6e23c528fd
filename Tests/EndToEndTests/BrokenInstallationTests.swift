import Foundation
import NSETestSupport
import Testing

/// A half-installed nse fails, with its own status, instead of passing a user's CI with `original` outcomes
/// (issue #39, defect 5): 69 when `nse-extension` or `nse-tool` is not beside `nse`.
@Suite struct BrokenInstallationTests {
    /// `nse` (and the other binaries named) linked into a new folder, as a partial installation would have them.
    func install(_ names: [String]) throws -> String {
        let folder = try TestSupport.temporaryDirectory("nse-half-installed")
        for name in names {
            let source = TestSupport.binDirectory + "/" + name
            if link(source, folder + "/" + name) != 0 {
                try FileManager.default.copyItem(atPath: source, toPath: folder + "/" + name)
            }
        }
        return folder
    }

    @Test func aMissingReferenceExtensionIsAnError() throws {
        let folder = try install(["nse", "nse-tool"])
        let device = folder + "/bob"
        #expect(try TestSupport.run(folder + "/nse", ["device", "init", device]).status == 0)
        let payload = #"{"aps":{"alert":"hi","mutable-content":1}}"#
        let run = try TestSupport.run(
            folder + "/nse", ["run", "--device", device], stdin: payload, environment: ["PATH": "/usr/bin:/bin"])
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("nse: the reference extension nse-extension is not beside "), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        let serve = try TestSupport.run(
            folder + "/nse", ["serve", "--device", device, "--listen", "127.0.0.1:0"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(serve.status == 69, "\(serve.stderr)")
        #expect(serve.stderr.hasPrefix("nse: serve: the reference extension"), "\(serve.stderr)")
        // Named but not there: the same.
        let named = try TestSupport.run(
            folder + "/nse", ["run", "--device", device], stdin: payload,
            environment: ["NSE_EXTENSION": folder + "/no-such-extension"])
        #expect(named.status == 69, "\(named.stderr)")
    }

    @Test func aMissingToolIsAnError() throws {
        let folder = try install(["nse"])
        let help = try TestSupport.run(folder + "/nse", ["--help"])
        #expect(help.status == 69, "\(help.stderr)")
        #expect(help.stderr.contains("nse-tool must sit beside nse"))
    }
}
