public import NSEHTTP
public import NSEJSON
public import NSEPayload
import NSESystem

/// One push as a provider sends it to APNs's `POST /3/device/{token}`: what `nse push` sends, to Apple's sandbox,
/// to `nse serve`, or to any APNs-compatible endpoint.
public struct APNsPush: Sendable {
    /// `https://HOST:PORT` (h2 by ALPN) or `http://HOST:PORT` (cleartext HTTP/2 with prior knowledge).
    public var baseURL: String
    public var deviceToken: String
    public var topic: String?
    public var pushType: PushType
    public var priority: Int?
    /// Unix seconds; 0 = deliver once or never.
    public var expiration: Int64?
    public var collapseID: String?
    public var apnsID: String?
    public var payload: [UInt8]
    /// The signed provider token for `authorization: bearer …`.
    public var providerToken: String?
    public var tls: HTTPTLSOptions
    public var timeout: Double

    public init(
        baseURL: String, deviceToken: String, topic: String?, pushType: PushType, payload: [UInt8],
        priority: Int? = nil, expiration: Int64? = nil, collapseID: String? = nil, apnsID: String? = nil,
        providerToken: String? = nil, tls: HTTPTLSOptions = HTTPTLSOptions(), timeout: Double = 30
    ) {
        self.baseURL = baseURL
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.providerToken = providerToken
        self.tls = tls
        self.timeout = timeout
    }

    /// The HTTP/2 request: the APNs headers, the payload as the body.
    public var request: HTTPRequest {
        var headers = HTTPHeaders()
        headers.add(name: "apns-push-type", value: pushType.rawValue)
        if let topic { headers.add(name: "apns-topic", value: topic) }
        if let priority { headers.add(name: "apns-priority", value: String(priority)) }
        if let expiration { headers.add(name: "apns-expiration", value: String(expiration)) }
        if let collapseID { headers.add(name: "apns-collapse-id", value: collapseID) }
        if let apnsID { headers.add(name: "apns-id", value: apnsID) }
        if let providerToken { headers.add(name: "authorization", value: "bearer \(providerToken)") }
        headers.add(name: "content-type", value: "application/json")
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        return HTTPRequest(
            method: "POST", url: "\(base)/3/device/\(deviceToken)", headers: headers, body: payload, timeout: timeout,
            version: .http2PriorKnowledge, tls: tls)
    }

    /// Sends the push and reads APNs's answer (any status).
    public func send(with client: HTTPClient = HTTPClient()) async throws(HTTPClientError) -> APNsAnswer {
        let response: HTTPResponse
        do { response = try await client.send(request) } catch let error as HTTPClientError { throw error } catch {
            throw HTTPClientError(code: .other, description: "\(error)")
        }
        return APNsAnswer(response)
    }
}

/// APNs's answer to one push: the status, `apns-id`, `apns-unique-id`, and for errors the `reason`.
public struct APNsAnswer: Sendable, Equatable, JSONEncodable {
    public var status: Int
    public var apnsID: String?
    public var uniqueID: String?
    public var reason: String?
    /// On 410: when the token stopped being valid (Unix milliseconds).
    public var timestamp: Int64?
    /// The HTTP version the answer came over (`2`, `1.1`).
    public var httpVersion: String

    public init(_ response: HTTPResponse) {
        status = response.status
        apnsID = response.headers["apns-id"]
        uniqueID = response.headers["apns-unique-id"]
        httpVersion = response.httpVersion
        let body = response.body.isEmpty ? nil : try? JSON.parse(response.body)
        reason = body?["reason"]?.stringValue
        timestamp = body?["timestamp"]?.intValue
        if status != 200, reason == nil, !response.body.isEmpty {
            reason =
                "unexpected body: "
                + String(String(decoding: response.body.prefix(200), as: UTF8.self).map { $0.isNewline ? " " : $0 })
        }
    }

    /// The one line `nse push` prints.
    public var json: JSON {
        var object: JSONObject = ["status": status.json, "apns_id": apnsID.json]
        if let uniqueID { object["apns_unique_id"] = .string(uniqueID) }
        if let reason { object["reason"] = .string(reason) }
        if let timestamp { object["timestamp"] = .int(timestamp) }
        object["http_version"] = .string(httpVersion)
        return .object(object)
    }
}

/// Reading a push's payload as `nse push` is given it: a JSON file, a simctl `.apns` file, or `-` for stdin.
public enum APNsPayloadFile {
    /// Why a payload file could not be used; one line, naming the file and, for JSON, where.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The file is missing or unreadable (as opposed to malformed).
        public var isMissing: Bool
        public var description: String
    }

    /// The bytes to send and, for a `.apns` file, the app it targets (`Simulator Target Bundle`, the default topic).
    /// The target key is removed from the payload, as simctl does; any other file is sent byte for byte, malformed
    /// JSON and an empty file included.
    public static func read(_ path: String) throws(Failure) -> (payload: [UInt8], targetBundle: String?) {
        let bytes: [UInt8]?
        do {
            bytes =
                path == "-"
                ? try FileSystem.readAll(fd: 0, limit: 1 << 20) : try FileSystem.readFile(path, limit: 1 << 20)
        } catch {
            throw Failure(isMissing: true, description: "\(path): \(error.description)")
        }
        guard let bytes else {
            throw Failure(isMissing: false, description: "\(path): the payload is larger than 1 MiB")
        }
        // Anything that is not a JSON object goes as it is: a provider (or a test of the server) may send a
        // malformed payload on purpose, and the server's answer is the point.
        guard
            let document = try? JSON.parse(
                bytes, options: JSONParseOptions(maxDepth: Intake.maxDepth, requireObject: true)),
            var root = document.objectValue, let target = root[Intake.simulatorTargetKey]
        else { return (bytes, nil) }
        guard let bundle = target.stringValue else {
            throw Failure(
                isMissing: false,
                description: "\(path): \"\(Intake.simulatorTargetKey)\" is a \(target.typeName), not a string")
        }
        root[Intake.simulatorTargetKey] = nil
        return (JSON.object(root).serializedBytes(), bundle)
    }
}
