import Foundation
import NSEOSLog
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `Logger` and `os_log` through their public API, read back from standard error, where nse writes each message as
/// `<subsystem>/<category> <level>: <message>`: the line, the levels, Apple's privacy rendering (no private value
/// ever appears), the formats, and `os_log`'s format strings.
///
/// Serialized: each test points the process's standard error at a file while it logs. Each test logs under a category
/// of its own and reads only its own lines, so what other suites write meanwhile does not matter.
@Suite(.serialized) struct OSLogTests {
    static let subsystem = "com.example.nse.tests"

    /// The levels written, as `NSE_OSLOG_LEVEL` sets them for this process (from `default` up when it is unset). The
    /// tests below write at `fault`, which every setting writes, except where they test the levels.
    static let writtenLevels: [String] = {
        let levels = ["debug", "info", "default", "error", "fault"]
        let threshold = ProcessInfo.processInfo.environment["NSE_OSLOG_LEVEL"]?.lowercased() ?? ""
        return Array(levels.drop { $0 != (levels.contains(threshold) ? threshold : "default") })
    }()

    @Test func writesOneLineWithSubsystemCategoryAndLevel() throws {
        let lines = try logged("line") { logger in
            logger.fault("hello \(3) and \(true)")
        }
        #expect(lines == ["com.example.nse.tests/line fault: hello 3 and true"])
        // `Logger()` is on `OSLog.default`: no subsystem, no category.
        let marker = UUID().uuidString
        let defaultLines = try captured { Logger().fault("on the default handle \(marker, privacy: .public)") }
        #expect(defaultLines.filter { $0.hasSuffix(marker) } == ["-/- fault: on the default handle \(marker)"])
    }

    /// A handle of Apple's reserved categories: `pointsOfInterest` writes under `PointsOfInterest`, the dynamic-tracing
    /// ones (Instruments only) write nothing.
    @Test func reservedCategoriesAsInstrumentsLeavesThem() throws {
        let marker = UUID().uuidString
        let lines = try captured {
            os_log(
                "%{public}@ shown", log: OSLog(subsystem: Self.subsystem, category: .pointsOfInterest), type: .fault,
                marker)
            os_log(
                "%{public}@ hidden", log: OSLog(subsystem: Self.subsystem, category: .dynamicTracing), type: .fault,
                marker)
        }
        #expect(lines.filter { $0.contains(marker) } == ["\(Self.subsystem)/PointsOfInterest fault: \(marker) shown"])
    }

    /// Each method writes the level Apple stores for it (those at or above `NSE_OSLOG_LEVEL`).
    @Test func eachMethodWritesApplesStoredLevel() throws {
        let lines = try logged("levels") { logger in
            logger.trace("trace")
            logger.debug("debug")
            logger.info("info")
            logger.log("log")
            logger.notice("notice")
            logger.warning("warning")
            logger.error("error")
            logger.critical("critical")
            logger.fault("fault")
            logger.log(level: .error, "log(level:)")
        }
        let all = [
            "debug: trace", "debug: debug", "info: info", "default: log", "default: notice", "error: warning",
            "error: error", "fault: critical", "fault: fault", "error: log(level:)",
        ]
        let written = Self.writtenLevels
        let expected = all.filter { written.contains(String($0.prefix { $0 != ":" })) }
        #expect(lines == expected.map { "\(Self.subsystem)/levels " + $0 })
    }

    /// Below `NSE_OSLOG_LEVEL` (by default `debug` and `info`, which Apple's default configuration does not keep) a
    /// message is not written, and its values are not even evaluated.
    @Test func levelsBelowTheThresholdAreNotWrittenNorEvaluated() throws {
        let counter = Counter()
        let lines = try logged("threshold") { logger in
            logger.debug("debug \(counter.next())")
            logger.trace("trace \(counter.next())")
            logger.info("info \(counter.next())")
            logger.notice("notice \(counter.next())")
        }
        let written = Self.writtenLevels
        let expected = [("debug", "debug"), ("debug", "trace"), ("info", "info"), ("default", "notice")]
            .filter { written.contains($0.0) }
        #expect(lines.count == expected.count)
        #expect(counter.calls == expected.count)
        #expect(OSLog.default.isEnabled(type: .debug) == written.contains("debug"))
        #expect(OSLog.default.isEnabled(type: .fault))
    }

    @Test func aDisabledLogWritesNothingAndEvaluatesNothing() throws {
        let counter = Counter()
        let lines = try logged("disabled") { _ in
            Logger(OSLog.disabled).fault("never \(counter.next())")
            os_log("never %d", log: .disabled, type: .fault, 1)
        }
        #expect(lines.isEmpty)
        #expect(counter.calls == 0)
        #expect(!OSLog.disabled.isEnabled(type: .fault))
    }

    /// Apple's rendering without a logging profile: strings, objects, errors and type names are `<private>` unless
    /// public; numbers and Booleans are shown unless private.
    @Test func privateValuesNeverAppear() throws {
        let failure: any Error = CocoaError(.fileNoSuchFile)
        let lines = try logged("privacy") { logger in
            logger.fault("auto string \("SECRET-1") public \("shown-1", privacy: .public)")
            logger.fault("private \("SECRET-2", privacy: .private) sensitive \("SECRET-3", privacy: .sensitive)")
            logger.fault("object \(NSString(string: "SECRET-4")) error \(failure) type \(type(of: failure))")
            logger.fault("url \(URL(string: "https://SECRET-5.example")!) optional \(NSNumber(value: 6) as NSObject?)")
            logger.fault("numbers \(7) \(2.5) \(true) private \(8, privacy: .private) \(false, privacy: .private)")
            logger.fault("public error \(failure.localizedDescription, privacy: .public)")
        }
        #expect(
            lines == [
                "com.example.nse.tests/privacy fault: auto string <private> public shown-1",
                "com.example.nse.tests/privacy fault: private <private> sensitive <private>",
                "com.example.nse.tests/privacy fault: object <private> error <private> type <private>",
                "com.example.nse.tests/privacy fault: url <private> optional <private>",
                "com.example.nse.tests/privacy fault: numbers 7 2.500000 true private <private> <private>",
                "com.example.nse.tests/privacy fault: public error \(failure.localizedDescription)",
            ])
        #expect(!lines.joined().contains("SECRET"))
    }

    /// `mask: .hash`: a salted SHA-256 prefix, the same for the same value, different for another, never the value.
    @Test func hashMaskCorrelatesWithoutShowingTheValue() throws {
        let lines = try logged("hash") { logger in
            logger.fault("a \("SECRET-USER", privacy: .private(mask: .hash))")
            logger.fault("b \("SECRET-USER", privacy: .private(mask: .hash))")
            logger.fault("c \("SECRET-OTHER", privacy: .private(mask: .hash))")
            logger.fault("d \(42, privacy: .private(mask: .hash)) \(42, privacy: .auto(mask: .hash))")
        }
        let hashes = lines.compactMap { line in line.firstMatch(of: /<mask\.hash: '([A-Za-z0-9+\/]{22}==)'>/)?.1 }
        #expect(hashes.count == 4)
        #expect(hashes[0] == hashes[1])
        #expect(hashes[0] != hashes[2])
        #expect(lines[3].hasSuffix("'> 42"))
        #expect(!lines.joined().contains("SECRET"))
    }

    @Test func formatsNumbersAsApplesFormattersDo() throws {
        let lines = try logged("numbers") { logger in
            logger.fault("\(UInt8(255), format: .hex) \(UInt(255), format: .hex(includePrefix: true, uppercase: true))")
            logger.fault(
                "\(UInt16(8), format: .octal(includePrefix: true)) \(42, format: .decimal(explicitPositiveSign: true))")
            logger.fault("\(7, format: .decimal(minDigits: 3)) \(Int64.min) \(UInt64.max)")
            logger.fault("[\(42, align: .right(columns: 5))] [\(42, align: .left(columns: 5))]")
            logger.fault(
                "[\("s", align: .left(columns: 3), privacy: .public)] [\("SECRET", align: .right(columns: 10))]"
            )
            logger.fault("\(3.14159, format: .fixed(precision: 2)) \(Float(0.5)) \(1234.5, format: .exponential)")
            logger.fault("\(0.25, format: .hybrid) \(-1.5, format: .fixed(explicitPositiveSign: true))")
            logger.fault("\(true, format: .answer) \(false) \(UInt32(9), attributes: "xcode:size-in-bytes")")
        }
        #expect(
            lines.map { $0.replacingOccurrences(of: "com.example.nse.tests/numbers fault: ", with: "") } == [
                "ff 0xFF", "0o10 +42", "007 -9223372036854775808 18446744073709551615", "[   42] [42   ]",
                "[s  ] [ <private>]", "3.14 0.500000 1.234500e+03", "0.25 -1.500000", "YES false 9",
            ])
    }

    /// A message is one line whatever it holds: a line break inside a value cannot forge a second message.
    @Test func aMessageIsAlwaysOneLine() throws {
        let lines = try logged("oneline") { logger in
            logger.fault("value \("x\ncom.example.nse.tests/oneline fault: forged", privacy: .public)")
        }
        #expect(lines == ["com.example.nse.tests/oneline fault: value x com.example.nse.tests/oneline fault: forged"])
    }

    @Test func classicOSLogFormatsItsArgumentsWithApplesPrivacy() throws {
        let log = OSLog(subsystem: Self.subsystem, category: "classic")
        let error = NSError(domain: "TestDomain", code: 7)
        let lines = try logged("classic") { _ in
            os_log("failed: %{public}@ hidden: %@ %s", log: log, type: .fault, "shown", "SECRET-1", "SECRET-2")
            os_log(.fault, log: log, "x %d %u %x %{private}d %5.1f|%-4d|", 3, 4, 255, 99, 2.25, 7)
            os_log("%@ / %{public}@", log: log, type: .fault, error, error)
            os_log("%{bool}d %{BOOL}d %c %% %d", log: log, type: .fault, 1, 0, 65)
            os_log("hash %{private, mask.hash}s", log: log, type: .fault, "SECRET-3")
        }
        #expect(lines.count == 5)
        #expect(lines[0] == "com.example.nse.tests/classic fault: failed: shown hidden: <private> <private>")
        #expect(lines[1] == "com.example.nse.tests/classic fault: x 3 4 ff <private>   2.2|7   |")
        #expect(lines[2] == "com.example.nse.tests/classic fault: <private> / \(error.description)")
        #expect(lines[3] == "com.example.nse.tests/classic fault: true NO A % <decode: missing data>")
        #expect(lines[4].hasPrefix("com.example.nse.tests/classic fault: hash <mask.hash: '"))
        #expect(!lines.joined().contains("SECRET"))
    }

    @Test func interpolatedOSLogWritesLikeALogger() throws {
        let log = OSLog(subsystem: Self.subsystem, category: "message")
        let count = 2
        let lines = try logged("message") { _ in
            os_log(.fault, log: log, "count \(count, privacy: .public) name \("SECRET")")
        }
        #expect(lines == ["com.example.nse.tests/message fault: count 2 name <private>"])
    }

    /// Apple's argument-buffer size: 2 bytes of header, then 2 bytes plus the value's own per value.
    @Test func bufferSizeIsApples() {
        let message: OSLogMessage = "\(1) \(Int32(2)) \("s") \(1.0) \(true) \(NSNumber(value: 1))"
        #expect(message.bufferSize == 2 + (8 + 2) + (4 + 2) + (8 + 2) + (8 + 2) + (4 + 2) + (8 + 2))
        #expect(OSLogMessage(stringLiteral: "plain").bufferSize == 2)
        #expect(maxOSLogArgumentCount == 48)
    }

    @Test func logTypesHaveApplesRawValues() {
        #expect(
            [OSLogType.default, .info, .debug, .error, .fault].map(\.rawValue) == [0x00, 0x01, 0x02, 0x10, 0x11])
        #expect(OSLogType(0x10) == .error)
    }

    /// NSObject is `CVarArg` as on Apple; through C varargs an object goes as its description.
    @Test func objectsFormatThroughStringFormat() {
        let error = NSError(domain: "TestDomain", code: 7)
        #expect(String(format: "%@ %@ %d", error, NSNumber(value: 3), 4) == "\(error.description) 3 4")
    }

    // MARK: - Helpers

    /// Counts how often a message's value was evaluated.
    final class Counter {
        private(set) var calls = 0
        func next() -> Int {
            calls += 1
            return calls
        }
    }

    /// Runs `body` with a logger for `category` while standard error goes to a file, and returns the lines written
    /// under that category.
    private func logged(_ category: String, _ body: (Logger) -> Void) throws -> [String] {
        try captured { body(Logger(subsystem: Self.subsystem, category: category)) }
            .filter { $0.hasPrefix("\(Self.subsystem)/\(category) ") }
    }

    /// The lines written to standard error while `body` runs (pointed at a file meanwhile).
    private func captured(_ body: () -> Void) throws -> [String] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("oslog-\(UUID().uuidString)").path
        let file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(file >= 0)
        defer {
            close(file)
            unlink(path)
        }
        let saved = dup(2)
        try #require(saved >= 0)
        dup2(file, 2)
        body()
        dup2(saved, 2)
        close(saved)
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }
}
