import ArgumentParser
import Logging
import NSECommandLine
import NSEJSON
import NSESIP
import NSESystem

/// `nse room`: what a liblinphone client does with a group chat room on the server (docs/sip.md, "Chat rooms"):
/// create one through the conference factory, change its subject, add or remove participants, read its state.
struct RoomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "room",
        abstract: "Create and manage a chat room on nse sip-server (a liblinphone group chat room).",
        discussion:
            "Each subcommand prints one JSON line. Exit 0 on success, 1 when the room refuses (403 not an admin or not a participant, 404 no such room), 74 without an answer, 64 for bad usage.",
        subcommands: [Create.self, Subject.self, Add.self, Remove.self, Show.self])

    /// A subject goes into a header: no control characters (a line break would forge another header).
    static func checkSubject(_ subject: String) throws {
        if subject.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw ValidationError("the subject has a control character")
        }
    }

    /// Who acts, through which proxy: the options `nse send` takes, less the recipient.
    struct Party: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "The proxy to go through, with its transport, e.g. 'sip:127.0.0.1:5060;transport=tcp'.",
                valueName: "uri"))
        var proxy: String

        @Option(help: ArgumentHelp("Your address of record (the room's admin, to change it).", valueName: "uri"))
        var from: String

        @Option(help: "Your SIP password, for digest challenges.")
        var password: String?

        @Option(help: ArgumentHelp("For TLS: trust the CA certificates in this PEM file.", valueName: "file"))
        var caFile: String?

        @Option(help: "Seconds to wait for the answer.")
        var timeout: Double = 10

        func validate() throws {
            guard timeout > 0, timeout <= 3600 else {
                throw ValidationError("--timeout must be more than 0 and at most 3600 seconds, not \(timeout)")
            }
        }

        /// Runs `body` with a room client acting as `--from`, mapping what fails to the documented exit statuses.
        func run<T: Sendable>(_ body: @escaping @Sendable (SIPRoomClient) async throws -> T) async throws -> T {
            let (me, proxyURI) = (try Self.uri(from, "--from"), try Self.uri(proxy, "--proxy"))
            let agent = SIPUserAgent(
                configuration: SIPUserAgentConfiguration(tls: .caFile(caFile), userAgent: "nse-room/1"),
                logger: Logger(label: "nse.room"))
            let client = SIPRoomClient(agent: agent, me: me, proxy: proxyURI, password: password)
            let outcome = await withTimeout(timeout) { try await body(client) }
            await agent.close()
            switch outcome {
            case .success(let value): return value
            case .failure(let refusal as SIPRoomClient.Refusal):
                // As `nse send`: 1 for a final answer that is not a success.
                StandardStreams.writeError("nse: room: \(refusal)\n")
                throw ExitCode(1)
            case .failure(let error):
                throw Failure(.ioError, "room: \(error)").exit()
            case nil:
                throw Failure(.ioError, "room: no answer within \(timeout) s").exit()
            }
        }

        /// A SIP URI from the command line; a bad one is a usage error naming the option.
        static func uri(_ text: String, _ option: String) throws -> SIPURI {
            do { return try SIPURI(parsing: text) } catch {
                throw Failure(.usage, "\(option) \(text): \(error)").exit()
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a room: an INVITE to the conference factory; prints the room's URI.")

        @OptionGroup var party: Party

        @Option(help: "The room's subject.")
        var subject: String

        @Option(help: ArgumentHelp("A participant's address of record (repeat it).", valueName: "uri"))
        var participant: [String] = []

        @Option(
            help: ArgumentHelp(
                "The conference factory (default: sip:conference-factory@ the --from domain).", valueName: "uri"))
        var factory: String?

        func validate() throws { try RoomCommand.checkSubject(subject) }

        func run() async throws {
            let me = try Party.uri(party.from, "--from")
            let factoryURI =
                try factory.map { try Party.uri($0, "--factory") }
                ?? SIPURI(user: "conference-factory", host: me.host)
            let participants = try participant.map { try Party.uri($0, "--participant") }
            let subject = self.subject
            let room = try await party.run { client in
                try await client.create(factory: factoryURI, subject: subject, participants: participants)
            }
            let json: JSON = [
                "room": .string(room.description), "subject": .string(subject),
                "participants": .array(participants.map { .string($0.description) }),
            ]
            StandardStreams.writeOut(json.serialized() + "\n")
        }
    }

    struct Subject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a room's subject (an INVITE with the new Subject; admins only).")

        @OptionGroup var party: Party

        @Argument(help: ArgumentHelp("The room's URI.", valueName: "room"))
        var room: String

        @Argument(help: ArgumentHelp("The new subject.", valueName: "subject"))
        var subject: String

        func validate() throws { try RoomCommand.checkSubject(subject) }

        func run() async throws {
            let roomURI = try Party.uri(room, "room")
            let subject = self.subject
            try await party.run { client in try await client.changeSubject(of: roomURI, to: subject) }
            let json: JSON = ["room": .string(room), "subject": .string(subject)]
            StandardStreams.writeOut(json.serialized() + "\n")
        }
    }

    /// A change to a room's participants: who acts, the room, the participant.
    struct ParticipantChange: ParsableArguments {
        @OptionGroup var party: Party

        @Argument(help: ArgumentHelp("The room's URI.", valueName: "room"))
        var room: String

        @Argument(help: ArgumentHelp("The participant's address of record.", valueName: "aor"))
        var participant: String

        /// Runs `change` on the room and the participant, then prints `{"room", key: participant}`.
        func run(
            printing key: String, _ change: @escaping @Sendable (SIPRoomClient, SIPURI, SIPURI) async throws -> Void
        ) async throws {
            let (roomURI, aor) = (try Party.uri(room, "room"), try Party.uri(participant, "aor"))
            try await party.run { client in try await change(client, aor, roomURI) }
            let json: JSON = ["room": .string(room), key: .string(aor.description)]
            StandardStreams.writeOut(json.serialized() + "\n")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a participant (a REFER to the room; admins only); the server invites it.")

        @OptionGroup var change: ParticipantChange

        func run() async throws {
            try await change.run(printing: "added") { client, aor, room in try await client.add(aor, to: room) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a participant (a REFER to the room with method=BYE; admins only).")

        @OptionGroup var change: ParticipantChange

        func run() async throws {
            try await change.run(printing: "removed") { client, aor, room in
                try await client.remove(aor, from: room)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a room's subject and participants (a SUBSCRIBE for its conference state, fetched once).")

        @OptionGroup var party: Party

        @Argument(help: ArgumentHelp("The room's URI.", valueName: "room"))
        var room: String

        func run() async throws {
            let roomURI = try Party.uri(room, "room")
            let wait = Duration.milliseconds(Int64(party.timeout * 1000))
            let info = try await party.run { client in try await client.state(of: roomURI, timeout: wait) }
            let json: JSON = [
                "room": .string(info.entity), "subject": JSON.string(info.subject),
                "version": .int(Int64(info.version)),
                "participants": .array(
                    info.users.map { ["aor": .string($0.entity), "admin": .bool($0.isAdmin)] }),
            ]
            StandardStreams.writeOut(json.serialized() + "\n")
        }
    }
}
