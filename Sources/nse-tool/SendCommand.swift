import ArgumentParser
import Logging
import NSEChat
import NSECommandLine
import NSECrypto
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSESIP
import NSESystem

/// `nse send`: what the sender's phone does, a SIP MESSAGE (optionally sealed to the recipient device).
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract:
            "Send a SIP MESSAGE, as Linphone does (CPIM with an IMDN delivery request); prints its Call-ID and final status.",
        discussion:
            "With --seal-to DEVICE_DIR the text is sealed to that device (a message plaintext, docs/envelope.md) and the envelope is the content; --seal-to repeated (the recipient's phones) seals one envelope of format nse3 for all of them, signed (--sign-with)."
    )

    @OptionGroup var party: SIPPartyOptions

    @Option(help: "The message text.")
    var text: String

    @Option(
        help: ArgumentHelp(
            "Send to this chat room instead of --to (nse room create): the server passes it on to every other participant, From the room; the CPIM From stays the sender's.",
            valueName: "uri"))
    var room: String?

    @Option(
        help: ArgumentHelp(
            "Seal the message to this device's public key; repeat it for each of the recipient's devices (format nse3).",
            valueName: "dir"))
    var sealTo: [String] = []

    @Option(
        help: ArgumentHelp(
            "With --seal-to: sign as this sender identity (nse keys init), envelope format nse2 (nse3 for several devices).",
            valueName: "file"))
    var signWith: String?

    @Option(help: "The sender's display name (goes into the sealed plaintext and the From header).")
    var displayName: String?

    @Flag(help: "Send the content bare instead of wrapped in CPIM with an IMDN delivery request.")
    var noCpim = false

    @Option(help: "Seconds to wait for the final response.")
    var timeout: Double = 32

    @OptionGroup var attachments: AttachOptions

    func validate() throws {
        if (room == nil) == (party.to == nil) { throw ValidationError("give either --to or --room") }
        if signWith != nil, sealTo.isEmpty { throw ValidationError("--sign-with needs --seal-to") }
        if sealTo.count > 1, signWith == nil {
            throw ValidationError("--seal-to repeated (format nse3) needs --sign-with: nse3 is signed")
        }
        if sealTo.count > MultiEnvelope.maxRecipients {
            throw ValidationError("at most \(MultiEnvelope.maxRecipients) --seal-to devices, not \(sealTo.count)")
        }
        if !attachments.attach.isEmpty, sealTo.isEmpty {
            throw ValidationError("--attach needs --seal-to: attachments are sealed")
        }
    }

    func run() async throws {
        do {
            let (toURI, fromURI, proxyURI) = try party.uris(to: room)
            let (from, to) = (party.from, room ?? party.to ?? "")
            var contentType = "text/plain;charset=UTF-8"
            var content = Array(text.utf8)
            if !sealTo.isEmpty {
                var keys: [PublicKey] = []
                for folder in sealTo {
                    do { keys.append(try Device.open(at: folder).publicKey()) } catch { throw Failure(error) }
                }
                var plaintext: JSONObject = ["type": "message", "from": .string(from), "text": .string(text)]
                if let displayName { plaintext["display_name"] = .string(displayName) }
                if let room { plaintext["chat_room"] = .string(room) }
                plaintext["sent_at"] = .string(SystemClock.rfc3339(unixSeconds: SystemClock.unixMilliseconds() / 1000))
                let uploaded = try attachments.upload()
                if !uploaded.isEmpty { plaintext["attachments"] = .array(uploaded.map(\.json)) }
                let bytes = Array(JSON.object(plaintext).serializedBytes())
                if let signWith, keys.count > 1 {
                    do {
                        let identity = try SenderIdentity.load(signWith)
                        content = Array(try identity.seal(bytes, toAll: keys).text.utf8)
                    } catch { throw Failure(error) }
                } else if let signWith {
                    do {
                        let identity = try SenderIdentity.load(signWith)
                        content = Array(try identity.seal(bytes, to: keys[0]).text.utf8)
                    } catch { throw Failure(error) }
                } else {
                    do { content = Array(try Envelope.seal(bytes, to: keys[0]).text.utf8) } catch {
                        throw Failure(.software, "\(error)")
                    }
                }
                contentType = "application/vnd.nse.envelope"
            }
            var bodyType = contentType
            var body = content
            if !noCpim {
                let messageID = (try? SecureRandom.hex(8)) ?? "0"
                let cpim = CPIMMessage(
                    headers: [
                        (name: "From", value: "<\(from)>"), (name: "To", value: "<\(to)>"),
                        (
                            name: "DateTime",
                            value: SystemClock.rfc3339(unixSeconds: SystemClock.unixMilliseconds() / 1000)
                        ),
                        (name: "NS", value: "imdn <\(IMDN.namespace)>"), (name: "imdn.Message-ID", value: messageID),
                        (name: "imdn.Disposition-Notification", value: "positive-delivery"),
                    ],
                    contentHeaders: [
                        (name: "Content-Type", value: contentType),
                        (name: "Content-Length", value: String(content.count)),
                    ],
                    body: content)
                bodyType = "message/cpim"
                body = cpim.bytes
            }
            let agent = SIPUserAgent(
                configuration: party.agentConfiguration(userAgent: "nse-send/1"), logger: Logger(label: "nse.send"))
            var message = SIPOutgoingMessage(
                to: toURI, from: fromURI, proxy: proxyURI, contentType: bodyType, body: body, password: party.password)
            message.callID = party.callID
            let outgoing = message
            let outcome = await withTimeout(timeout) { try await agent.sendMessage(outgoing) }
            await agent.close()
            switch outcome {
            case .success(let result):
                let json: JSON = [
                    "call_id": .string(result.callID), "status": .int(Int64(result.statusCode)),
                    "reason": .string(result.reasonPhrase), "elapsed_ms": .double(milliseconds(result.elapsed)),
                ]
                StandardStreams.writeOut(json.serialized() + "\n")
                if !(200..<300).contains(result.statusCode) { throw ExitCode(1) }
            case .failure(let error):
                throw Failure(.ioError, "send failed: \(error)")
            case nil:
                throw Failure(.ioError, "send failed: no final response within \(timeout) s")
            }
        } catch let failure as Failure {
            throw failure.exit()
        }
    }
}

/// A duration in milliseconds (microsecond precision).
func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1000 + Double(attoseconds / 1_000_000_000_000) / 1000
}

/// Runs `operation`, giving up (nil) after `seconds`.
func withTimeout<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async -> Result<
    T, any Error
>? {
    await withTaskGroup(of: Result<T, any Error>?.self) { group in
        group.addTask {
            do { return .success(try await operation()) } catch { return .failure(error) }
        }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
