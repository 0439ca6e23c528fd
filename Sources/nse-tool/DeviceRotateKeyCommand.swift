import ArgumentParser
import NSECommandLine
import NSEDevice
import NSEJSON
import NSESystem

extension DeviceCommand {
    /// `nse device rotate-key`: a new X25519 key for the device, the old one kept for a grace period.
    struct RotateKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract:
                "Give the device a new key pair; the old key still opens what was sealed to it for a grace period.",
            discussion: """
                Writes a new keys/private.key (mode 0600) and publishes its public key in device.json, for senders \
                (nse seal --device, nse send --seal-to). The old key moves to keys/retired/ and opens envelopes \
                sealed to it until the grace period ends; then it is dropped (at the next rotation, or when an \
                envelope next names it). Retired keys whose grace has ended are dropped now. Prints the new key's id \
                and public key, and the retired keys (never a private key). Interrupted, it is run again: it then \
                finishes publishing the new key instead of making another.
                """)

        @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
        var directory: String

        @Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "Seconds the old key keeps opening what was sealed to it (default 604800, a week: how long nse sip-server holds a message; 0 drops it at once; at most 31536000).",
                valueName: "seconds"))
        var grace: Int64 = Device.defaultKeyGrace

        func validate() throws {
            guard grace >= 0 else { throw ValidationError("--grace must not be negative") }
            guard grace <= Device.maximumKeyGrace else {
                throw ValidationError("--grace must be at most \(Device.maximumKeyGrace) seconds (a year)")
            }
        }

        func run() throws {
            do throws(Failure) {
                var device = try DeviceOption(device: directory).open()
                let now = SystemClock.unixSeconds()
                let rotation: KeyRotation
                do { rotation = try device.rotateKey(grace: grace, now: now) } catch {
                    throw error.code == .invalidOption ? Failure(.usage, error.description) : Failure(error)
                }
                StandardStreams.writeOut(
                    rotation.json(directory: device.directory, now: now).serialized(.pretty) + "\n")
            } catch {
                throw error.exit()
            }
        }
    }
}
