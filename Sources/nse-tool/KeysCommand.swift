import ArgumentParser
import NSECrypto
import NSEDevice
import NSEJSON
import NSESystem

/// `nse keys`: sender identities for signed envelopes (docs/envelope.md, format nse2).
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Sender identities for signed envelopes.", subcommands: [Init.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a sender identity (an Ed25519 key pair) in FILE, readable by its owner only.",
            discussion:
                "Prints its public key: give it to a device with `nse device trust DIR --contact URI --key KEY`. The file is never overwritten."
        )

        @Argument(help: ArgumentHelp("The identity file to create.", valueName: "file"))
        var file: String

        func run() throws {
            do {
                let identity: SenderIdentity
                do { identity = try SenderIdentity.create(at: file) } catch { throw Failure(error) }
                let line: JSON = ["file": .string(file), "public_key": .string(identity.publicKey.base64)]
                StandardStreams.writeOut(line.serialized(.pretty) + "\n")
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }
}
