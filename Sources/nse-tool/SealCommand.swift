import ArgumentParser
import NSEAPNs
import NSECommandLine
import NSECrypto
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSESystem

/// `nse seal`: what the sender's app does, seal a plaintext to the device's public key.
struct SealCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal",
        abstract: "Seal a plaintext JSON document (stdin) to a device; prints the envelope on one line.",
        discussion:
            "The plaintext must follow the content schema (docs/envelope.md) unless --raw is given. --hpke seals for an extension of your own that opens it with CryptoKit (format hpke1). Several recipients (--device or --to repeated: a person's phones) get one envelope of format nse3, signed (--sign-with), each device opening only its own share."
    )

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp(
            "Seal to this device container folder (default: $NSE_DEVICE, else $XDG_DATA_HOME/nse/device); repeat it for each of a person's devices (format nse3).",
            valueName: "dir"))
    var devices: [String] = []

    @Option(
        help: ArgumentHelp(
            "Seal to this X25519 public key (base64) instead of a device; may be repeated, as --device.",
            valueName: "pubkey"))
    var to: [String] = []

    @Flag(help: "Seal as format nse3 (several devices) even for one recipient; needs --sign-with.")
    var nse3 = false

    @Flag(help: "Seal stdin as it is, without checking it against the content schema (for testing a receiver).")
    var raw = false

    @Option(
        help: ArgumentHelp(
            "Sign as this sender identity (nse keys init), then seal: envelope format nse2 (docs/envelope.md).",
            valueName: "file"))
    var signWith: String?

    @Flag(
        help:
            "Seal with HPKE (RFC 9180: X25519, HKDF-SHA256, ChaCha20-Poly1305) for an extension that opens it with CryptoKit: envelope format hpke1 (docs/envelope.md)."
    )
    var hpke = false

    @Option(
        help: ArgumentHelp(
            "With --hpke: the HPKE info string the extension opens with (default: \(HPKEEnvelope.defaultInfo)).",
            valueName: "string"))
    var info: String?

    @OptionGroup var attachments: AttachOptions

    /// Format nse3: asked for, or more than one recipient.
    var sealsForSeveral: Bool { nse3 || devices.count + to.count > 1 }

    func validate() throws {
        if sealsForSeveral {
            if hpke { throw ValidationError("--hpke seals for one device; several recipients take format nse3") }
            if signWith == nil {
                throw ValidationError("sealing for several devices (format nse3) needs --sign-with: nse3 is signed")
            }
            if devices.count + to.count > MultiEnvelope.maxRecipients {
                throw ValidationError(
                    "at most \(MultiEnvelope.maxRecipients) recipients, not \(devices.count + to.count)")
            }
        }
        if !attachments.attach.isEmpty, raw { throw ValidationError("--raw and --attach exclude each other") }
        if raw, signWith != nil { throw ValidationError("--raw and --sign-with exclude each other") }
        if hpke, signWith != nil { throw ValidationError("--hpke and --sign-with exclude each other") }
        if info != nil, !hpke { throw ValidationError("--info is for --hpke") }
    }

    func run() throws {
        do {
            let recipients = try recipientKeys()
            let recipient = recipients[0]
            let read = try readInput("-", limit: 64 * 1024)
            guard var input = read else { throw Failure(.rejected, "the plaintext is larger than 64 KiB") }
            let uploaded = try attachments.upload()
            if !uploaded.isEmpty { input = try AttachmentUpload.adding(uploaded, to: input) }
            if !raw {
                do { _ = try Plaintext(input) } catch { throw Failure(.rejected, "stdin: \(error.description)") }
            }
            if hpke {
                let sealed: HPKEEnvelope
                do {
                    sealed = try HPKEEnvelope.seal(input, to: recipient, info: info ?? HPKEEnvelope.defaultInfo)
                } catch {
                    throw Failure(!to.isEmpty ? .usage : .config, "--hpke: \(error.description)")
                }
                StandardStreams.writeOut(sealed.text + "\n")
                return
            }
            if sealsForSeveral, let signWith {
                let identity: SenderIdentity
                do { identity = try SenderIdentity.load(signWith) } catch { throw Failure(error) }
                do {
                    StandardStreams.writeOut(try identity.seal(input, toAll: recipients).text + "\n")
                } catch { throw Failure(.usage, error.description) }
                return
            }
            let envelope: Envelope
            if let signWith {
                let identity: SenderIdentity
                do { identity = try SenderIdentity.load(signWith) } catch { throw Failure(error) }
                do { envelope = try identity.seal(input, to: recipient) } catch { throw Failure(error) }
            } else {
                do { envelope = try Envelope.seal(input, to: recipient) } catch {
                    throw Failure(.software, error.description)
                }
            }
            StandardStreams.writeOut(envelope.text + "\n")
        } catch let failure as Failure {
            throw failure.exit()
        }
    }

    /// The recipients' public keys: each `--to`, then each `--device`'s; the default device when none is named.
    private func recipientKeys() throws(Failure) -> [PublicKey] {
        var keys: [PublicKey] = []
        for text in to {
            do { keys.append(try PublicKey(base64: text)) } catch {
                throw Failure(.usage, "--to: \(error.description)")
            }
        }
        let folders: [String?] = devices.isEmpty && to.isEmpty ? [nil] : devices
        for folder in folders {
            let device: Device
            do {
                if let folder {
                    device = try Device.open(at: folder)
                } else {
                    device = try Device.openOrCreate(at: Device.defaultDirectory())
                }
            } catch { throw Failure(error) }
            do { keys.append(try device.publicKey()) } catch { throw Failure(.config, "\(error)") }
        }
        return keys
    }
}
