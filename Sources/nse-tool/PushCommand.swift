import ArgumentParser
import NSEAPNs
import NSECommandLine
import NSEDevice
import NSEHTTP
import NSEHost
import NSEJSON
import NSEPayload
import NSESystem

/// `nse push`: the provider side, like `xcrun simctl push` but over APNs's HTTP/2 API, to `nse serve` or to APNs.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract:
            "Send one push to an APNs-compatible endpoint (nse serve, or APNs itself) over HTTP/2 and print its answer.",
        discussion: """
            Prints APNs's answer as one JSON line: {"status":200,"apns_id":…,"apns_unique_id":…} or, refused, \
            {"status":400,"reason":"BadDeviceToken",…}. With --auth-key-file it signs an ES256 provider token \
            (kid = --key-id, iss = --team-id). https URLs negotiate h2 by ALPN; http URLs use HTTP/2 with prior \
            knowledge (h2c). Exit status: 0 accepted (200), 65 refused by the server, 64 usage, 66 payload file \
            missing or unreadable, 74 no answer (connection, TLS, timeout), 78 key problem.
            """)

    @Argument(
        help: ArgumentHelp(
            "The payload: a JSON file, a simctl .apns file (its \"Simulator Target Bundle\" is the default topic), or - for stdin.",
            valueName: "payload"))
    var payload: String

    @Option(help: ArgumentHelp("The server: nse serve's URL, or https://api.sandbox.push.apple.com.", valueName: "url"))
    var url: String = "http://127.0.0.1:8443"

    @Option(help: ArgumentHelp("The device token (hex).", valueName: "hex"))
    var deviceToken: String?

    @Option(
        help: ArgumentHelp(
            "Take the token (remote, or voip for --push-type voip) and the topic from this device container.",
            valueName: "dir"))
    var device: String?

    @Option(
        help: ArgumentHelp(
            "apns-topic (default: the bundle id of --device or of the .apns file, + .voip for voip pushes).",
            valueName: "topic"))
    var topic: String?

    @Option(help: ArgumentHelp("apns-push-type: alert, background, voip, …", valueName: "type"))
    var pushType: String = "alert"

    @Option(help: ArgumentHelp("apns-priority: 10, 5 or 1.", valueName: "n"))
    var priority: Int?

    @Option(help: ArgumentHelp("apns-expiration, Unix seconds (0: now or never).", valueName: "seconds"))
    var expiration: Int64?

    @Option(help: ArgumentHelp("apns-collapse-id.", valueName: "id"))
    var collapseId: String?

    @Option(help: ArgumentHelp("apns-id (a UUID; the server makes one when absent).", valueName: "uuid"))
    var apnsId: String?

    @OptionGroup var providerKey: ProviderKeyOptions

    @Option(
        help: ArgumentHelp(
            "Trust the CA certificates in this PEM file (e.g. nse serve's self-signed certificate).", valueName: "file")
    )
    var cacert: String?

    @Flag(help: "Do not verify the server's certificate.")
    var insecure = false

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 30

    func validate() throws {
        if (deviceToken == nil) == (device == nil) { throw ValidationError("give either --device-token or --device") }
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw ValidationError("--url \(url): expected an http:// or https:// URL")
        }
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be more than 0 and at most 3600 seconds")
        }
    }

    func run() async throws {
        guard let type = PushType(rawValue: pushType) else {
            // APNs knows more types (complication, location…); nse push sends the ones an nse device receives.
            throw Failure(.usage, "--push-type \(pushType): nse push sends alert, background or voip").exit()
        }
        let file: (payload: [UInt8], targetBundle: String?)
        do { file = try APNsPayloadFile.read(payload) } catch {
            throw Failure(error.isMissing ? .noInput : .rejected, error.description).exit()
        }
        var token = deviceToken
        var bundle = file.targetBundle
        if let device {
            let container: Device
            do { container = try Device.open(at: device) } catch { throw Failure(error).exit() }
            token = type == .voip ? container.config.voipToken : container.config.remoteToken
            bundle = bundle ?? container.config.bundleID
        }
        let resolvedTopic = topic ?? bundle.map { type == .voip ? $0 + ".voip" : $0 }

        var providerToken: String?
        if let key = providerKey.key {
            do {
                providerToken = try await ProviderTokenSigner(keyFile: key.file, keyID: key.keyID, teamID: key.teamID)
                    .token()
            } catch {
                throw Failure(.config, "--auth-key-file \(error.description)").exit()
            }
        }
        let push = APNsPush(
            baseURL: url, deviceToken: token ?? "", topic: resolvedTopic, pushType: type, payload: file.payload,
            priority: priority, expiration: expiration, collapseID: collapseId, apnsID: apnsId,
            providerToken: providerToken,
            tls: HTTPTLSOptions(caFilePath: cacert, insecureSkipVerify: insecure), timeout: timeout)
        let answer: APNsAnswer
        do { answer = try await push.send() } catch {
            throw Failure(.ioError, "push to \(url): \(error.description)").exit()
        }
        StandardStreams.writeOut(answer.json.serialized() + "\n")
        guard answer.status == 200 else {
            throw Failure(.rejected, "push refused: \(answer.status) \(answer.reason ?? "")").exit()
        }
    }
}
