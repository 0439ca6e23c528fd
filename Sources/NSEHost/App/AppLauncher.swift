import NSEDevice
import NSEHTTP
import NSEJSON
import NSEPayload
import NSESystem

/// "iOS launches the app" for a VoIP payload: the app's handler must report the call to CallKit before its
/// deadline, or it is terminated and a strike is recorded; after too many strikes VoIP payloads are no longer
/// delivered to it.
struct AppLauncher {
    var device: Device

    /// Delivers a VoIP payload to the app, with what iOS 26.4 tells it beside the payload (`mustReport`: whether
    /// this push must be reported; a command handler finds it in `NSE_VOIP_MUST_REPORT`, a URL handler in the
    /// `nse-voip-must-report` header, both `true` or `false`).
    func launch(_ payload: JSONObject, mustReport: Bool = true) -> AppLaunch {
        let settings = device.config.voip
        // The App Group store keeps the strikes and the call log. A store that cannot be opened is reported in the
        // launch (`store_error`), and the app is launched as if it had no strikes: the call is not lost for it.
        let state: VoIPState?
        var storeError: String?
        do { state = try device.appGroup().voip } catch {
            state = nil
            storeError = error.description
        }
        func note(_ failure: DeviceError) { storeError = storeError ?? failure.description }
        var strikes = 0
        do { strikes = try state?.strikes() ?? 0 } catch { note(error) }
        var launch = AppLaunch(
            outcome: .refused, handler: settings.appHandler.name, strikes: strikes, maxStrikes: settings.maxStrikes)
        launch.mustReport = mustReport
        guard strikes < settings.maxStrikes else {
            do { try state?.record(["outcome": "refused", "strikes": .int(Int64(strikes))]) } catch { note(error) }
            launch.storeError = storeError
            return launch
        }
        let start = SystemClock.monotonicNanoseconds()
        let answer: Result<[UInt8], AppFailure>
        switch settings.appHandler {
        case .builtIn:
            answer = .success(BuiltInApp.report(for: payload, through: settings.framework).json.serializedBytes())
        case .command(let command):
            answer = runCommand(command, payload: payload, deadline: settings.appDeadline, mustReport: mustReport)
        case .url(let url):
            answer = post(url, payload: payload, deadline: settings.appDeadline, mustReport: mustReport)
        }
        launch.wallMilliseconds = SystemClock.millisecondsSince(start)
        do throws(AppFailure) {
            let bytes = try answer.get()
            let json: JSON
            do { json = try JSON.parse(bytes, options: JSONParseOptions(maxDepth: 8)) } catch {
                throw AppFailure("malformed report: \(error.description)")
            }
            let report: CallReport
            do {
                if json["version"] == 2 {
                    // Version 2: the report, and what the user does with this call (docs/voip.md).
                    report = try CallReport(json: json["report"] ?? .null)
                    launch.handlerVersion = 2
                    if let call = json["call"] {
                        do { launch.callSettings = try CallSettings(json: call) } catch {
                            throw error.inside(["call"])
                        }
                    }
                } else {
                    report = try CallReport(json: json)
                }
            } catch { throw AppFailure("malformed report: \(error)") }
            if let conflict = device.config.iosVersion.conflict(reportingThrough: report.framework) {
                throw AppFailure("reported through a framework the device does not have: \(conflict)")
            }
            launch.report = report
            launch.outcome = .reported
            do {
                try state?.record([
                    "outcome": "reported", "uuid": .string(report.uuid), "handle": .string(report.handleValue),
                    "caller": .string(report.localizedCallerName), "video": .bool(report.hasVideo),
                    "framework": .string(report.framework.rawValue),
                ])
            } catch { note(error) }
        } catch  where !mustReport {
            // iOS 26.4: an app told this push need not be reported may let it go without a strike.
            launch.outcome = .notReported
            launch.failure = error.description
            do { try state?.record(["outcome": "not-reported", "failure": .string(error.description)]) } catch {
                note(error)
            }
        } catch {
            launch.outcome = .terminated
            launch.failure = error.description
            do {
                launch.strikes = try state?.recordStrike(reason: error.description) ?? strikes + 1
                try state?.record([
                    "outcome": "terminated", "failure": .string(error.description),
                    "strikes": .int(Int64(launch.strikes)),
                ])
            } catch let failure {
                launch.strikes = strikes + 1
                note(failure)
            }
        }
        launch.storeError = storeError
        return launch
    }

    /// Tells a version-2 handler how the call it reported ended (`{"version": 2, "event": "call-ended", "uuid",
    /// "call_id", "end_reason"}`, on stdin or POSTed as the launch was) and reads whether it ended its CallKit call:
    /// `{"version": 2, "ended": {"uuid", "reason"}}` within the app's deadline. An app that does not leaves a call
    /// on the screen that is no longer there: flagged.
    func endCall(_ record: CallRecord, uuid: String) -> CallRecord.CallKitEnd {
        let settings = device.config.voip
        let event: JSONObject = [
            "version": 2, "event": "call-ended", "uuid": .string(uuid), "call_id": .string(record.callID),
            "end_reason": record.endReason.json,
        ]
        let answer: Result<[UInt8], AppFailure>
        switch settings.appHandler {
        case .builtIn:
            return CallRecord.CallKitEnd(ended: true, reason: record.endReason)
        case .command(let command):
            answer = runCommand(command, payload: event, deadline: settings.appDeadline, mustReport: true)
        case .url(let url):
            answer = post(url, payload: event, deadline: settings.appDeadline, mustReport: true)
        }
        let bytes: [UInt8]
        switch answer {
        case .success(let output): bytes = output
        case .failure(let failure):
            return CallRecord.CallKitEnd(ended: false, failure: "the app did not end the CallKit call: \(failure)")
        }
        guard let json = try? JSON.parse(bytes, options: JSONParseOptions(maxDepth: 8)),
            let ended = json["ended"]?.objectValue
        else {
            return CallRecord.CallKitEnd(
                ended: false, failure: "the app did not end the CallKit call: its answer has no \"ended\"")
        }
        guard ended["uuid"]?.stringValue?.uppercased() == uuid.uppercased() else {
            return CallRecord.CallKitEnd(
                ended: false, reason: ended["reason"]?.stringValue,
                failure: "the app ended another CallKit call than the one it reported")
        }
        return CallRecord.CallKitEnd(ended: true, reason: ended["reason"]?.stringValue)
    }

    struct AppFailure: Error, Equatable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs the handler with the payload on stdin; its stdout (until it exits) is the report.
    private func runCommand(_ command: String, payload: JSONObject, deadline: Double, mustReport: Bool) -> Result<
        [UInt8], AppFailure
    > {
        var session = AppHandlerMachine(payload: payload, deadline: deadline)
        let report = ProcessDriver.run(
            ChildProcess.shellCommand(command, environment: ["NSE_VOIP_MUST_REPORT": mustReport ? "true" : "false"]),
            session: &session)
        switch session.phase {
        case .failed(let failure):
            return .failure(failure)
        case .launching, .reading, .exiting, .answered:
            break
        }
        if session.output.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            let exit = report.exit.map { $0.exitCode.map { "status \($0)" } ?? "signal \($0.signal ?? 0)" } ?? "?"
            return .failure(AppFailure("exited (\(exit)) without reporting a call"))
        }
        return .success(session.output)
    }

    /// POSTs the payload; the answer's body is the report.
    private func post(_ url: String, payload: JSONObject, deadline: Double, mustReport: Bool) -> Result<
        [UInt8], AppFailure
    > {
        var request = HTTPRequest.post(url: url, json: JSON.object(payload).serializedBytes())
        request.headers.add(name: "nse-voip-must-report", value: mustReport ? "true" : "false")
        request.timeout = max(deadline, 0.001)
        request.connectTimeout = max(min(deadline, 5), 0.001)
        do {
            let response = try HTTPClient(maxResponseBodyBytes: 64 * 1024).send(request)
            guard (200..<300).contains(response.status) else {
                return .failure(AppFailure("the handler answered HTTP \(response.status)"))
            }
            return .success(response.body)
        } catch let error as HTTPClientError {
            return .failure(AppFailure(error.code == .timeout ? "no report within \(deadline) s" : error.description))
        } catch {
            return .failure(AppFailure("\(error)"))
        }
    }
}
