/// A `/metrics` answer in Prometheus's text format, read sample by sample (`name{label="value",…} number`), so a
/// test can ask for one series' value. Comments (`# TYPE`, `# HELP`) are skipped.
public struct MetricsExposition: Sendable {
    public struct Sample: Sendable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    public let samples: [Sample]

    public init(_ text: String) {
        samples = text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else { return nil }
            let series = line[..<space]
            guard let open = series.firstIndex(of: "{") else {
                return Sample(name: String(series), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            // `key="value"` pairs; the values nse writes hold no quote, comma or backslash.
            for pair in series[series.index(after: open)...].dropLast().split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: String(series[..<open]), labels: labels, value: value)
        }
    }

    public init(_ bytes: [UInt8]) {
        self.init(String(decoding: bytes, as: UTF8.self))
    }

    /// The value of the series with exactly these labels; nil when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The sum over every series of `name` whose labels include `matching`.
    public func sum(_ name: String, matching: [String: String] = [:]) -> Double {
        samples.filter { sample in
            sample.name == name && matching.allSatisfy { sample.labels[$0.key] == $0.value }
        }.reduce(0) { $0 + $1.value }
    }
}
