/// A SIP response: status code, reason phrase, headers and body.
public struct SIPResponse: Sendable, Hashable {
    /// The status code (100...699).
    public var statusCode: Int
    /// The reason phrase.
    public var reasonPhrase: String
    /// The header fields in order.
    public var headers: SIPHeaders
    /// The body bytes (never log it).
    public var body: [UInt8]

    /// Creates a response.
    public init(statusCode: Int, reasonPhrase: String? = nil, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) {
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase ?? SIPResponse.defaultReason(statusCode)
        self.headers = headers
        self.body = body
    }

    /// True for 1xx responses.
    public var isProvisional: Bool { statusCode < 200 }

    /// The usual reason phrase for a status code.
    public static func defaultReason(_ code: Int) -> String {
        switch code {
        case 100: return "Trying"
        case 180: return "Ringing"
        case 200: return "OK"
        case 202: return "Accepted"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 413: return "Request Entity Too Large"
        case 423: return "Interval Too Brief"
        case 480: return "Temporarily Unavailable"
        case 481: return "Call/Transaction Does Not Exist"
        case 486: return "Busy Here"
        case 500: return "Server Internal Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 603: return "Decline"
        default:
            switch code / 100 {
            case 1: return "Progress"
            case 2: return "Success"
            case 3: return "Redirection"
            case 4: return "Client Error"
            case 5: return "Server Error"
            default: return "Global Failure"
            }
        }
    }
}
