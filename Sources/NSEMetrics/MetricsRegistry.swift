public import CoreMetrics
import Prometheus

/// One server's metrics: the swift-metrics factory its parts count with, and what `/metrics` answers.
///
/// Made per server rather than bootstrapped into `MetricsSystem`: the global factory can be set once per process,
/// and a test process runs many servers.
public final class MetricsRegistry: Sendable {
    /// Prometheus's text exposition format, which ``exposition()`` renders.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// What the server's parts make their counters, gauges and histograms with.
    public let factory: any MetricsFactory
    private let registry: PrometheusCollectorRegistry

    /// - Parameters:
    ///   - valueHistogramBuckets: the upper bounds of each value histogram (a swift-metrics `Recorder` that
    ///     aggregates), by metric name; others get swift-prometheus's defaults.
    ///   - durationHistogramBuckets: the same for each duration histogram (a swift-metrics `Timer`), rendered in
    ///     seconds.
    public init(
        valueHistogramBuckets: [String: [Double]] = [:], durationHistogramBuckets: [String: [Duration]] = [:]
    ) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets = valueHistogramBuckets
        factory.durationHistogramBuckets = durationHistogramBuckets
        self.registry = registry
        self.factory = factory
    }

    /// Every metric made so far, in Prometheus's text format.
    @Sendable public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
