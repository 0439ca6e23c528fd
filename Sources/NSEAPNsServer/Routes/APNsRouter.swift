import Hummingbird

/// Hummingbird's `Router` answering as APNs does where the router has no route: 404 `BadPath` for a path no route
/// takes, and 405 `MethodNotAllowed` for a method a known path does not take, which the router would answer as an
/// unknown path. Controllers add their routes to it as to any router.
final class APNsRouter: RouterMethods, HTTPResponderBuilder {
    typealias Context = PushRequestContext

    /// Every method a known path answers, with its own route or 405.
    static let methods: [HTTPRequest.Method] = [
        .get, .head, .post, .put, .delete, .patch, .options, .trace, .connect,
    ]

    private let router = Router(context: Context.self)
    /// The paths routed so far and the methods each takes, in the order they came.
    private var routed: [(path: RouterPath, methods: Set<HTTPRequest.Method>)] = []

    init() {
        router.add(middleware: BadPath())
    }

    @discardableResult
    func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        router.on(path, method: method, responder: responder)
        if let index = routed.firstIndex(where: { $0.path == path }) {
            routed[index].methods.insert(method)
        } else {
            routed.append((path, [method]))
        }
        return self
    }

    @discardableResult
    func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }

    func buildResponder() -> RouterResponder<Context> {
        for (path, taken) in routed {
            for method in Self.methods where !taken.contains(method) {
                router.on(path, method: method) { _, _ in PushResponder.error(.methodNotAllowed, apnsID: nil) }
            }
        }
        return router.buildResponder()
    }

    /// APNs's answer to a path it does not serve, in place of the router's plain 404.
    private struct BadPath: RouterMiddleware {
        typealias Context = PushRequestContext
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws -> Response
        {
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                return PushResponder.error(.badPath, apnsID: nil)
            }
        }
    }
}
