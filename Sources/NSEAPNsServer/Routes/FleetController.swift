import Hummingbird
import NSEJSON

/// What the nodes of a fleet ask each other beyond forwarded pushes; only with the fleet's secret (docs/serve.md,
/// "Coming back"):
///
/// - `POST /v1/fleet/handback` `{"node": NAME, "folders": [...], "devices": [...]}`: a node starting again asks for
///   the folders this node took over from it; answered `{"devices": N}` once they are its again, 409 when they are
///   not this node's to give.
struct FleetController {
    let service: PushService

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .post("fleet/handback", use: handBack)
    }

    @Sendable func handBack(_ request: Request, context: PushRequestContext) async -> Response {
        let headers = request.apnsHeaders
        // Not a client's to ask: without the secret the path is unknown, as on a node outside any fleet.
        guard let fleet = service.fleet, fleet.forwardedIdentity(headers) != nil else {
            return PushResponder.error(.badPath, apnsID: nil)
        }
        guard let buffer = try? await request.body.collect(upTo: 1 << 20),
            let document = try? JSON.parse(Array(buffer.readableBytesView)),
            let node = document["node"]?.stringValue, !node.isEmpty,
            let folders = document["folders"]?.arrayValue?.compactMap(\.stringValue),
            let devices = document["devices"]?.arrayValue?.compactMap(\.stringValue)
        else {
            return ControlController.error(
                400, "BadHandback", "expected {\"node\": …, \"folders\": […], \"devices\": […]}")
        }
        do {
            let count = try await service.handBack(Set(folders + devices), to: node)
            return PushResponder.json(["devices": .int(count)])
        } catch {
            return ControlController.error(
                error.status, error.status == 409 ? "NotTakenOver" : "InternalServerError",
                error.description)
        }
    }
}
