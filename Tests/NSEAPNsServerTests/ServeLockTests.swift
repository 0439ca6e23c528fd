import Foundation
import NSETestSupport
import Testing

/// One `nse serve` per device (issue #39, defect 3): a second server on a device another one serves would take its
/// push in progress for a crash leftover and run it again. It is refused at start instead (75), by device or by
/// folder, whichever way each names it; and once the first has stopped, the device can be served again.
@Suite(.serialized) struct ServeLockTests {
    @Test func aSecondServerOnADeviceIsRefused() throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-lock")
        let device = root + "/bob"
        #expect(try TestSupport.nse(["device", "init", device, "--bundle-id", "org.example.app"]).status == 0)
        let folder = root + "/fleet"
        #expect(try TestSupport.nse(["device", "init-many", folder, "--count", "2"]).status == 0)
        let member = folder + "/device-00001"

        let first = try ServeProcess(["--listen", "127.0.0.1:0", "--device", device, "--devices", folder])
        let pid = first.process.processIdentifier
        for arguments in [["--device", device], ["--devices", folder], ["--device", member]] {
            let second = try TestSupport.nse(["serve", "--listen", "127.0.0.1:0"] + arguments)
            #expect(second.status == 75, "\(arguments): \(second.stderr)")
            #expect(second.stderr.contains("is served by another nse serve (pid \(pid))"), "\(second.stderr)")
            #expect(second.stderr.hasPrefix("nse: serve: ") && second.stderr.split(separator: "\n").count == 1)
        }
        #expect(first.stop() == 0)
        let again = try ServeProcess(["--listen", "127.0.0.1:0", "--device", member])
        #expect(again.url.hasPrefix("http://"))
        // A device named twice by one server is one device, not a conflict with itself.
        #expect(again.stop() == 0)
        let twice = try ServeProcess(["--listen", "127.0.0.1:0", "--device", device, "--device", device + "/"])
        #expect(twice.url.hasPrefix("http://"))
        #expect(twice.stop() == 0)
    }
}
