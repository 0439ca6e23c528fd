// NSEMetrics: the servers' metrics as Prometheus reads them. The servers (NSEAPNsServer, NSESIPServer) count through
// swift-metrics' API only, with the factory they are given; the executable makes one `MetricsRegistry` per server
// (swift-prometheus's registry, never the process-wide `MetricsSystem`, so that several servers in one process, as
// in the tests, keep their counts apart) and serves its text at `/metrics`: on `nse serve`'s own listeners, and on
// `MetricsListener` for `nse sip-server --metrics-listen`.
//
// Files:
//   MetricsRegistry  one server's registry: the swift-metrics factory (with the servers' histogram buckets) and the
//                    text format
//   MetricsListener  a Hummingbird listener that serves `GET /metrics` and nothing else, as a `Service`
