import Hummingbird
import NIOCore

/// `GET /metrics`: every metric of the server (``ServeMetrics``) for Prometheus to scrape, on the same listeners as
/// APNs's API and the control API. Not routed when the service was made without metrics.
struct MetricsController {
    let metrics: ServeMetrics

    var endpoints: RouteCollection<PushRequestContext> {
        let routes = RouteCollection(context: PushRequestContext.self)
        guard let exposition = metrics.exposition else { return routes }
        let contentType = metrics.contentType
        return routes.get("metrics") { _, _ in
            var fields = HTTPFields()
            fields[.contentType] = contentType
            fields[.cacheControl] = "no-store"
            return Response(
                status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: exposition())))
        }
    }
}
