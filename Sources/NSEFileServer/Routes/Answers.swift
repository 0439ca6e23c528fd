import Hummingbird
import NIOCore
import NSEJSON

/// The server's JSON answers: a document, or an error as `{"reason": WORD, "detail": TEXT}` (the detail when there
/// is something to say, never a path on the server).
enum Answers {
    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(
            status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serializedBytes())))
    }

    static func error(
        _ status: HTTPResponse.Status, _ reason: String, _ detail: String? = nil, headers: HTTPFields = [:]
    ) -> Response {
        var body: JSONObject = ["reason": .string(reason)]
        if let detail { body["detail"] = .string(detail) }
        return json(.object(body), status: status, headers: headers)
    }

    /// An unknown file, a refused path, and a `not-found` fault alike: the answer does not tell them apart.
    static var notFound: Response { error(.notFound, "NotFound") }
}
