import Hummingbird
import NIOCore
import NSEJSON

/// The control API, for a client's tests (docs/files.md):
///
/// - `GET /control/faults`: `{"rules": [...]}`, each with its `id` and `remaining`; `POST` adds a rule or a list of
///   them (201 and what was added); `DELETE` removes them all, `DELETE /control/faults/{id}` one.
/// - `GET /control/requests[?since=ID][&limit=N]`: the request log, newest first; `DELETE` clears it.
struct ControlController: Sendable {
    let faults: FileFaultPlan
    let requests: RequestLog

    /// The most a control request's body may hold.
    static let bodyLimit = 64 * 1024

    var endpoints: RouteCollection<FilesRequestContext> {
        RouteCollection(context: FilesRequestContext.self)
            .get("faults") { _, _ in Answers.json(faults.json) }
            .post("faults", use: addFaults)
            .delete("faults") { _, _ in
                faults.clear()
                return Response(status: .noContent)
            }
            .delete("faults/:id") { _, context in
                guard let id = context.parameters.get("id").flatMap(Int.init), faults.remove(id: id) else {
                    return Answers.error(.notFound, "NoSuchFault")
                }
                return Response(status: .noContent)
            }
            .get("requests", use: listRequests)
            .delete("requests") { _, _ in
                requests.clear()
                return Response(status: .noContent)
            }
    }

    @Sendable func addFaults(_ request: Request, context: FilesRequestContext) async -> Response {
        guard let buffer = try? await request.body.collect(upTo: Self.bodyLimit),
            let document = try? JSON.parse(
                Array(buffer.readableBytesView), options: JSONParseOptions(requireObject: false))
        else { return Answers.error(.badRequest, "BadFault", "the body must be a JSON fault object or a list of them") }
        var added: [FileFault] = []
        for item in document.arrayValue ?? [document] {
            do { added.append(try FileFault(json: item)) } catch {
                return Answers.error(.badRequest, "BadFault", error.description)
            }
        }
        let entries = added.map { faults.add($0).json }
        return Answers.json(document.arrayValue == nil ? entries[0] : .array(entries), status: .created)
    }

    @Sendable func listRequests(_ request: Request, context: FilesRequestContext) -> Response {
        let query = request.uri.queryParameters
        var limit = 1000
        var since = 0
        if let text = query["limit"] {
            guard let number = Int(text), number >= 0 else { return Answers.error(.badRequest, "BadLimit") }
            limit = number
        }
        if let text = query["since"] {
            guard let number = Int(text), number >= 0 else { return Answers.error(.badRequest, "BadSince") }
            since = number
        }
        return Answers.json(.array(requests.entries(since: since, limit: limit).map(\.json)))
    }
}
