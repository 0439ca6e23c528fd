import Hummingbird
import NIOCore
import NSEDevice
import NSESystem

/// The lock-screen page at `/` (``LockScreenPage``), drawn from the results recorded so far, and the attachment
/// files it shows (``AttachmentFiles``), and the cases `--record` wrote, for its "save as case" links.
struct PageController {
    let service: PushService
    /// The most phones the page draws (a server of 10,000 devices shows its first ones).
    static let phones = 64
    /// The notifications drawn per phone.
    static let notifications = 20

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .get(use: page)
            .get("v1/devices/:token/attachments/:request/:file") { _, context in
                await AttachmentFiles.respond(
                    token: context.parameters.get("token") ?? "", request: context.parameters.get("request") ?? "",
                    file: context.parameters.get("file") ?? "", service: service)
            }
            .get("v1/cases/:name") { _, context in
                let name = context.parameters.get("name") ?? ""
                guard let recording = service.recording else { return ControlController.notRecording }
                guard let bytes = recording.file(named: name) else {
                    return ControlController.error(404, "NoSuchCase", "no recorded case of that name")
                }
                var fields = HTTPFields()
                fields[.contentType] = "application/json"
                fields[.contentDisposition] = "attachment; filename=\"\(name).json\""
                fields[.cacheControl] = "no-store"
                return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            }
    }

    @Sendable func page(_ request: Request, context: PushRequestContext) async -> Response {
        var phones: [LockScreenPage.Phone] = []
        for device in service.devices.first(Self.phones) {
            let results = (try? await service.results(for: device, limit: Self.notifications, since: 0)) ?? []
            let activities = (try? device.liveActivities.read().activities) ?? []
            phones.append(
                LockScreenPage.Phone(
                    device: device, results: results, activities: activities,
                    center: try? device.notificationCenter.state()))
        }
        var fields = HTTPFields()
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(string: LockScreenPage.render(phones))))
    }
}
