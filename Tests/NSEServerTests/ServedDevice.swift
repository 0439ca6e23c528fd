import Logging
import NSEDevice
import NSETestSupport

/// A fresh device (`ROOT/bob`, bundle `org.example.app`) in a temporary folder of its own, as the in-process
/// server tests serve it.
struct ServedDevice {
    let root: String
    let device: Device
    var token: String { device.config.remoteToken }

    init(_ prefix: String) throws {
        root = try TestSupport.temporaryDirectory(prefix)
        var options = Device.Options()
        options.bundleID = "org.example.app"
        device = try Device.create(at: root + "/bob", options: options)
    }

    /// A logger that says nothing below critical: the tests read the store, not the log.
    static var quietLogger: Logger {
        var logger = Logger(label: "nse.serve.test")
        logger.logLevel = .critical
        return logger
    }
}
