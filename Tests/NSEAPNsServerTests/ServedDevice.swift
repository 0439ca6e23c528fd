import Logging
import NSEDevice
import NSETestSupport

#if canImport(Glibc)
    import Glibc
#endif

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

    /// An extension script in the device's folder that reads the request, runs `before` (shell lines), then
    /// delivers a fixed alert; returns its path.
    func slowExtension(_ name: String, before: String) throws -> String {
        let path = root + "/" + name
        try TestSupport.write(
            """
            #!/bin/sh
            read -r request
            \(before)
            printf '%s\\n' '{"type":"content","content":{"aps":{"alert":{"title":"Slow","body":"done"}}}}'
            """, to: path)
        chmod(path, 0o755)
        return path
    }

    /// One mutable-content alert push with `apnsID` over h2c to `url`; the HTTP status.
    func push(to url: String, apnsID: String) async throws -> String {
        try await runOffPool(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30", "-H",
                "apns-topic: org.example.app", "-H", "apns-id: \(apnsID)",
                "--data-binary", #"{"aps":{"alert":"hello","mutable-content":1}}"#, url + "/3/device/" + token,
            ], timeout: 40
        ).stdout
    }

    /// A logger that says nothing below critical: the tests read the store, not the log.
    static var quietLogger: Logger {
        var logger = Logger(label: "nse.serve.test")
        logger.logLevel = .critical
        return logger
    }
}
