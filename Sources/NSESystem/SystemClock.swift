#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Monotonic and wall-clock time without Foundation.
public enum SystemClock {
    /// Monotonic nanoseconds since an arbitrary point (for measuring durations).
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Suspends the task until the monotonic time `deadline` (``monotonicNanoseconds()``), at once if it has passed;
    /// throws when the task is cancelled first.
    public static func sleep(until deadline: UInt64) async throws {
        let now = monotonicNanoseconds()
        if deadline > now { try await Task.sleep(for: .nanoseconds(Int64(deadline - now))) }
    }

    /// Milliseconds elapsed since a monotonic start point, with microsecond precision.
    public static func millisecondsSince(_ start: UInt64) -> Double {
        Double(monotonicNanoseconds() &- start) / 1_000_000
    }

    /// Wall-clock milliseconds since the Unix epoch.
    public static func unixMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Wall-clock whole seconds since the Unix epoch.
    public static func unixSeconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    /// Wall-clock nanoseconds since the Unix epoch.
    public static func unixNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Seconds since the epoch formatted as RFC 3339 UTC, e.g. `2026-11-21T10:00:00Z`.
    public static func rfc3339(unixSeconds: Int64) -> String {
        utc(unixSeconds, separator: "T", suffix: "Z")
    }

    /// Seconds since the epoch in Flexisip's `send-time` form, UTC: `2026-11-21 10:00:00`.
    public static func flexisipTime(unixSeconds: Int64) -> String {
        utc(unixSeconds, separator: " ", suffix: "")
    }

    /// `YYYY-MM-DD<separator>HH:MM:SS<suffix>` in UTC.
    private static func utc(_ unixSeconds: Int64, separator: String, suffix: String) -> String {
        var time = time_t(unixSeconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))\(separator)"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))\(suffix)"
    }

    /// Parses RFC 3339 (`2026-11-21T10:00:00Z`, fractions and `±hh:mm` offsets allowed) and Flexisip's
    /// `send-time` form (`2026-11-21 10:00:00`, UTC) into epoch seconds; `nil` when malformed.
    public static func parseTimestamp(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int32? {
            guard from + count <= bytes.count else { return nil }
            var value: Int32 = 0
            for byte in bytes[from..<(from + count)] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int32(byte - 48)
            }
            return value
        }
        guard bytes.count >= 19, bytes[4] == 45, bytes[7] == 45, bytes[13] == 58, bytes[16] == 58,
            bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == 46 {  // fractional seconds
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            if index == start { return nil }
        }
        var offset: Int64 = 0
        if index < bytes.count {
            switch bytes[index] {
            case 90, 122:  // Z, z
                index += 1
            case 43, 45:  // +, -
                guard let hours = number(index + 1, 2), bytes.count > index + 3, bytes[index + 3] == 58,
                    let minutes = number(index + 4, 2)
                else { return nil }
                offset = Int64(hours) * 3600 + Int64(minutes) * 60
                if bytes[index] == 45 { offset = -offset }
                index += 6
            default:
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int64(timegm(&parts)) - offset
    }
}
