import ArgumentParser
import Logging
import NSECall
import NSECommandLine
import NSECrypto
import NSEDevice
import NSEJSON
import NSESIP
import NSESystem

/// `nse call`: what the caller's phone does, an INVITE that rings, is answered or refused, and ends.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract:
            "Place a SIP call, as a caller's phone does; prints how it went (Call-ID, final status, who ended it, the timeline).",
        discussion: """
            The caller hangs up --hangup-after seconds after the answer unless the callee does first; it cancels at \
            --cancel-after, or when no final answer came within --timeout. With --seal-to DEVICE_DIR a call offer \
            sealed to that device goes beside the SDP (the end-to-end-encrypted route: the server pushes it, the \
            callee's extension opens it). Exit status: 0 answered, or cancelled as --cancel-after asked; 1 refused by \
            the callee, or cancelled at --timeout; 74 no final answer (connection, the 487 never came); 64 usage; \
            78 the --seal-to device cannot be used.
            """
    )

    @OptionGroup var party: SIPPartyOptions

    @Option(help: "The caller's display name (From; and in the sealed offer).")
    var displayName: String?

    @Flag(help: "Offer video as well as audio.")
    var video = false

    @Option(help: ArgumentHelp("Seal a call offer to this device's public key.", valueName: "dir"))
    var sealTo: String?

    @Option(help: ArgumentHelp("Cancel the call this many seconds after the INVITE, if not answered.", valueName: "s"))
    var cancelAfter: Double?

    @Option(help: ArgumentHelp("Hang up this many seconds after the answer.", valueName: "s"))
    var hangupAfter: Double = 1

    @Option(
        help: ArgumentHelp(
            "Give up (CANCEL) when no final answer came within this many seconds; also the wait for the 487.",
            valueName: "s"))
    var timeout: Double = 30

    @Option(help: "The digest user name (default: the From user).")
    var username: String?

    func validate() throws {
        if let cancelAfter, !(0...3600).contains(cancelAfter) {
            throw ValidationError("--cancel-after must be from 0 to 3600 seconds, not \(cancelAfter)")
        }
        guard (0...3600).contains(hangupAfter) else {
            throw ValidationError("--hangup-after must be from 0 to 3600 seconds, not \(hangupAfter)")
        }
        guard (0.1...3600).contains(timeout) else {
            throw ValidationError("--timeout must be from 0.1 to 3600 seconds, not \(timeout)")
        }
    }

    func run() async throws {
        do {
            let (toURI, fromURI, proxyURI) = try party.uris()
            let id = party.callID ?? SIPIdentifiers.callID()
            let sdp = SessionDescription(offerFrom: fromURI.host, video: video).bytes
            var envelope: String? = nil
            if let sealTo {
                let device: Device
                do { device = try Device.open(at: sealTo) } catch { throw Failure(error) }
                let callUUID: String
                do { callUUID = try SecureRandom.uuid() } catch { throw Failure(.software, "\(error)") }
                let plaintext = CallOffer.plaintext(
                    callUUID: callUUID, from: party.from, displayName: displayName, video: video, sipCallID: id,
                    sentAt: SystemClock.rfc3339(unixSeconds: SystemClock.unixSeconds()))
                do { envelope = try CallOffer.seal(plaintext, to: device.publicKey()) } catch let error as DeviceError {
                    throw Failure(error)
                } catch { throw Failure(.software, "\(error)") }
            }
            let (contentType, body) = CallOffer.body(sdp: sdp, envelope: envelope)
            let call = SIPOutgoingCall(
                to: toURI, from: fromURI, proxy: proxyURI, contentType: contentType, body: body, callID: id,
                username: username, password: party.password, displayName: displayName)
            let driver = CallerDriver(
                call: call,
                plan: CallerMachine.Plan(cancelAfter: cancelAfter, hangupAfter: hangupAfter, timeout: timeout),
                configuration: party.agentConfiguration(userAgent: "nse-call/1"), logger: Logger(label: "nse.call"))
            let report = await driver.report(sealed: envelope != nil)
            StandardStreams.writeOut(report.json.serialized() + "\n")
            let end = report.outcome.end
            if end.endedBy == .failure && !end.answered {
                throw Failure(.ioError, "call failed: \(report.outcome.failure ?? "no final answer")")
            }
            // Set up, or ended as the caller asked (its own CANCEL): 0; refused, or given up on: 1.
            if !end.answered && end.endedBy != .caller { throw ExitCode(1) }
        } catch let failure as Failure {
            throw failure.exit()
        }
    }
}
