import Dispatch
public import Logging
import NSEDevice
import NSEJSON
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The app's process for one call (`nse-app`): the host starts it once the app reported the call to CallKit, and
/// writes it an ``AppCallRequest`` line. It prints one JSON line per step of the call as it happens
/// (`{"step": "registered"}`…), then `{"outcome": {...}}`, and exits 0; a request it cannot carry out is one line
/// `{"error": "…"}` and exit status 78. Its lines are the host's timeline: the host times each one as it reads it.
public enum AppCallProcess {
    /// Reads the request on stdin, runs the call, prints its steps; returns the exit status. Logs to `logger`, the
    /// process's (`nse-app` makes it), with the call's Call-ID.
    public static func main(logger: Logger) async -> Int32 {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readAll(fd: 0, limit: 64 * 1024) ?? [] } catch {
            return fail("cannot read the request: \(error)")
        }
        let request: AppCallRequest
        do { request = try AppCallRequest(json: try JSON.parse(bytes)) } catch {
            return fail("malformed request: \(error)")
        }
        let device: Device
        do { device = try Device.open(at: request.device) } catch { return fail(error.description) }
        guard let account = device.config.sip else { return fail("the device has no SIP account") }
        let password: String?
        do { password = try device.sipPassword() } catch { return fail(error.description) }
        var logger = logger
        logger[metadataKey: "sip.call_id"] = "\(request.callID)"
        let driver = CalleeDriver(
            device: device, account: account, password: password, callID: request.callID, plan: request.plan,
            logger: logger)
        // SIGTERM (the host is stopping) ends the call now: the driver hears it as an event.
        signal(SIGTERM, SIG_IGN)
        let (terminate, terminated) = AsyncStream<Void>.makeStream()
        let source = DispatchSource.makeSignalSource(signal: SIGTERM)
        source.setEventHandler { terminated.yield() }
        source.resume()
        defer { source.cancel() }
        let outcome = await driver.run(terminate: terminate) { step in
            print(line: ["step": .string(step.rawValue)])
        }
        var summary: JSONObject = [
            "end_reason": .string(outcome.endReason.rawValue), "sip_status": outcome.sipStatus.json,
        ]
        if let video = outcome.video { summary["video"] = .bool(video) }
        if let status = outcome.registrationStatus { summary["registration_status"] = .int(Int64(status)) }
        print(line: ["outcome": .object(summary)])
        return 0
    }

    private static func print(line: JSONObject) {
        StandardStreams.writeOut(JSON.object(line).serialized() + "\n")
    }

    private static func fail(_ problem: String) -> Int32 {
        print(line: ["error": .string(problem)])
        return 78
    }
}
