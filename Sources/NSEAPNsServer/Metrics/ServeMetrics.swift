public import CoreMetrics
import NSEHost
import NSEPayload

/// What `nse serve` counts (docs/serve.md, "Metrics"), through swift-metrics' API with the factory the executable
/// gives, and how `/metrics` renders it. Every label takes one of a bounded set of values: never a token, an apns-id,
/// a topic or anything of a payload.
public struct ServeMetrics: Sendable {
    /// The metrics' names, as Prometheus shows them.
    public enum Name {
        public static let pushes = "nse_apns_pushes_total"
        public static let notifications = "nse_notifications_total"
        public static let extensionWall = "nse_extension_wall_seconds"
        public static let extensionFootprint = "nse_extension_peak_footprint_bytes"
        public static let queueDepth = "nse_delivery_queue_depth"
        public static let connections = "nse_http_connections_open"
        public static let broadcasts = "nse_apns_broadcasts_total"
        public static let channelRequests = "nse_apns_channel_requests_total"
    }

    /// The footprint histogram's bounds, in bytes: the reference extension peaks at about 5 MB, iOS kills at 24 MB
    /// (`--memory-limit`), so the buckets are finest below that.
    public static let valueHistogramBuckets: [String: [Double]] = [
        Name.extensionFootprint: [2, 4, 6, 8, 12, 16, 20, 24, 32, 48].map { $0 * 1_048_576 }
    ]

    /// The wall-time histogram's bounds: from a warm process's few milliseconds to the 30 s budget and its grace.
    public static let durationHistogramBuckets: [String: [Duration]] = [
        Name.extensionWall: [
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
            .seconds(30), .seconds(60),
        ]
    ]

    private let factory: any MetricsFactory
    /// Renders `/metrics`; nil: the route is not served.
    let exposition: (@Sendable () -> [UInt8])?
    let contentType: String
    /// Pushes accepted and not yet done, running or waiting for a worker (``DeliveryQueue``).
    let queueDepth: Meter
    /// Accepted connections not yet closed, on every listener, before their protocol is known too.
    let connections: Meter
    private let extensionWall: CoreMetrics.Timer
    private let extensionFootprint: Recorder

    /// - Parameters:
    ///   - factory: makes the metrics; one per server, so that servers in one process count apart.
    ///   - contentType: the `Content-Type` of `/metrics`.
    ///   - exposition: every metric in the format `contentType` names, for `GET /metrics`.
    public init(
        factory: any MetricsFactory, contentType: String, exposition: @escaping @Sendable () -> [UInt8]
    ) {
        self.init(factory: factory, contentType: contentType, exposition: Optional(exposition))
    }

    /// Counts nothing and serves no `/metrics` (a service embedded without metrics).
    public init() {
        self.init(factory: NOOPMetricsHandler.instance, contentType: "", exposition: nil)
    }

    private init(factory: any MetricsFactory, contentType: String, exposition: (@Sendable () -> [UInt8])?) {
        self.factory = factory
        self.contentType = contentType
        self.exposition = exposition
        queueDepth = Meter(label: Name.queueDepth, dimensions: [], factory: factory)
        connections = Meter(label: Name.connections, dimensions: [], factory: factory)
        extensionWall = CoreMetrics.Timer(label: Name.extensionWall, dimensions: [], factory: factory)
        extensionFootprint = Recorder(
            label: Name.extensionFootprint, dimensions: [], aggregate: true, factory: factory)
    }

    /// One `POST /3/device` answered: `status` (nil when an injected GOAWAY closed the connection instead) and
    /// APNs's reason (nil for a 200). The push type and priority are the ones the request asks for, as
    /// ``APNsValidation`` reads them, or `invalid`; the reasons are APNs's words, nse's own or those scripted by
    /// the operator's faults, never a client's free text.
    func answered(_ headers: APNsHeaders, status: Int?, reason: String?) {
        let type = APNsValidation.pushTypeName(headers)
        let priority: String
        switch headers.first(where: { $0.name == "apns-priority" })?.value {
        case nil: priority = String(APNsValidation.defaultPriority(pushTypeName: type))
        case let given? where ["10", "5", "1"].contains(given): priority = given
        default: priority = "invalid"
        }
        Counter(
            label: Name.pushes,
            dimensions: [
                ("push_type", APNsValidation.knownPushTypes[type] == nil ? "invalid" : type),
                ("priority", priority), ("status", status.map(String.init) ?? "goaway"), ("reason", reason ?? ""),
            ], factory: factory
        ).increment()
    }

    /// One `POST /4/broadcasts/apps/{bundle}` answered: its priority as asked (or `invalid`), status and reason.
    func broadcastAnswered(_ headers: APNsHeaders, status: Int, reason: String?) {
        let priority: String
        switch headers.first(where: { $0.name == "apns-priority" })?.value {
        case nil: priority = "10"
        case let given? where ["10", "5", "1"].contains(given): priority = given
        default: priority = "invalid"
        }
        Counter(
            label: Name.broadcasts,
            dimensions: [("priority", priority), ("status", String(status)), ("reason", reason ?? "")],
            factory: factory
        ).increment()
    }

    /// One channel-management request answered: `create`, `read`, `delete` or `list`, its status and reason.
    func channelAnswered(_ operation: String, status: Int, reason: String?) {
        Counter(
            label: Name.channelRequests,
            dimensions: [("operation", operation), ("status", String(status)), ("reason", reason ?? "")],
            factory: factory
        ).increment()
    }

    /// One accepted push's result, as it is recorded: its outcome, and the extension's wall time and peak
    /// footprint when a process ran for it (not for a push judged on content kept across a restart).
    func recorded(_ result: NotificationResult, pushType: PushType) {
        Counter(
            label: Name.notifications,
            dimensions: [("push_type", pushType.rawValue), ("outcome", result.outcome.rawValue)], factory: factory
        ).increment()
        guard let report = result.extensionReport, report.process != nil else { return }
        extensionWall.recordMilliseconds(report.wallMilliseconds)
        // The footprint is what iOS's limit counts; where the kernel cannot tell it, the resident peak stands in.
        if let kilobytes = report.peakFootprintKilobytes ?? report.peakRSSKilobytes {
            extensionFootprint.record(kilobytes * 1024)
        }
    }
}
