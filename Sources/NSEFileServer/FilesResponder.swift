import Hummingbird
import NIOCore
import NSESystem

/// The HTTP side of `nse files`: ``FilesController`` (`POST /files`, `GET` and `HEAD /files/{id}`) and
/// ``ControlController`` (`/control/faults`, `/control/requests`) on one router. Every request but the control API's
/// goes into the request log once its answer has ended, with the body bytes actually sent.
struct FilesResponder: HTTPResponder {
    typealias Context = FilesRequestContext

    private let router: RouterResponder<Context>
    private let requests: RequestLog
    private let connections: OpenConnections

    init(files: FilesController, control: ControlController, requests: RequestLog, connections: OpenConnections) {
        let router = Router(context: Context.self)
        router.add(middleware: NotFoundAnswer())
        router.addRoutes(files.endpoints, atPath: "/files")
        router.addRoutes(control.endpoints, atPath: "/control")
        self.router = router.buildResponder()
        self.requests = requests
        self.connections = connections
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        var context = context
        context.httpVersion = connections.served(on: context.channel)
        let path = request.uri.path
        if path == "/control" || path.hasPrefix("/control/") {
            return try await router.respond(to: request, context: context)
        }
        let logged = LoggedRequest(
            log: requests,
            entry: RequestLog.Entry(
                receivedAt: SystemClock.unixMilliseconds(), method: request.method.rawValue,
                path: request.uri.description, httpVersion: context.httpVersion, range: request.headers[.range]))
        context.logged = logged
        var response = try await router.respond(to: request, context: context)
        let status = response.status.code
        logged.update { $0.status = status }
        // HEAD is answered with the head alone (RFC 9110 §9.3.2): no DATA on an HTTP/2 stream that must carry none.
        if request.method == .head {
            response.body = ResponseBody()
            logged.finish(complete: true)
            return response
        }
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            do {
                try await body.write(CountingWriter(base: writer, logged: logged))
                logged.finish(complete: true)
            } catch {
                logged.finish(complete: false)
                throw error
            }
        }
        return response
    }
}

/// A body writer that tells the request's log entry what went out.
private struct CountingWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let logged: LoggedRequest

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await base.write(buffer)
        logged.sent(buffer.readableBytes)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}

/// The server's JSON 404 where the router has no route.
private struct NotFoundAnswer: RouterMiddleware {
    typealias Context = FilesRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return Answers.notFound
        }
    }
}
