public import Logging
import NSEChat
import NSEExtensionBuild
public import NSEHost
public import NSEJSON
import NSESystem

/// `nse replay`: runs case files, reports progress, writes JUnit, re-records expectations.
public struct ReplayRunner: Sendable {
    public var jobs: Int
    public var filter: String?
    public var update: Bool
    public var workRoot: String
    public var extensionCommand: [String]
    /// The replay's logger, made by the command; each case's SIP server and agents log to it.
    public var logger: Logger
    /// How cases that do not say run extension processes (`--extension-process`).
    public var extensionProcess = ExtensionProcessPool.Mode.fresh
    /// Seconds a warm process may stay idle, for cases that do not say (`--warm-idle`).
    public var warmIdle = ExtensionProcessPool.defaultIdleTime
    /// Fresh processes exec'd or forked by the extension's fork server, one server per command for the whole replay
    /// (`--extension-launch`).
    public var extensionLaunch = ExtensionForkServers.Launch.exec

    public init(
        jobs: Int, filter: String?, update: Bool, workRoot: String, extensionCommand: [String], logger: Logger
    ) {
        self.jobs = max(1, jobs)
        self.filter = filter
        self.update = update
        self.workRoot = workRoot
        self.extensionCommand = extensionCommand
        self.logger = logger
    }

    /// What a search for cases found.
    public struct CaseSearch: Sendable, Equatable {
        /// The case files: files as given, then each folder's in name order.
        public var files: [String] = []
        /// One line per searched folder that holds `.json` files but no case (skipped).
        public var skipped: [String] = []
    }

    /// The case files under the given paths. A file given is a case. Folders are searched for `*.json`: in a
    /// folder where any `.json` file is a case (a JSON object with `expect`), every `.json` file is taken as one, so
    /// a broken case fails rather than vanishes; a folder whose `.json` files are none of them cases (plaintexts,
    /// fuzz corpora) is skipped with one line. A folder given that holds no case anywhere under it is an error.
    public static func findCases(_ paths: [String]) throws(ReplayError) -> CaseSearch {
        var search = CaseSearch()
        for path in paths {
            if FileSystem.isDirectory(path) {
                var found = CaseSearch()
                collect(path, into: &found)
                guard !found.files.isEmpty else {
                    throw ReplayError(
                        file: path, field: nil,
                        message:
                            "holds no case (a case is a .json file with a JSON object that has \"expect\"; docs/replay.md)"
                    )
                }
                search.files += found.files
                search.skipped += found.skipped
            } else if FileSystem.exists(path) {
                search.files.append(path)
            } else {
                throw ReplayError(file: path, field: nil, message: "no such file or folder")
            }
        }
        return search
    }

    private static func collect(_ directory: String, into search: inout CaseSearch) {
        guard let names = try? FileSystem.contents(ofDirectory: directory) else { return }
        var json: [String] = []
        var folders: [String] = []
        for name in names {
            let path = Path.join(directory, name)
            if FileSystem.isDirectory(path) {
                folders.append(path)
            } else if name.hasSuffix(".json") {
                json.append(path)
            }
        }
        if json.contains(where: isCase) {
            search.files += json
        } else if !json.isEmpty {
            search.skipped.append(
                "\(directory): skipped, none of its \(json.count) .json files is a case (no \"expect\")")
        }
        for folder in folders { collect(folder, into: &search) }
    }

    /// Whether a file holds a JSON object with an `expect` member.
    static func isCase(_ path: String) -> Bool {
        guard let bytes = try? FileSystem.readFile(path, limit: 1024 * 1024),
            let object = (try? JSON.parse(bytes, options: JSONParseOptions(maxDepth: 32)))?.objectValue
        else { return false }
        return object["expect"] != nil
    }

    /// Builds each distinct `extension_source` once, one after the other (the builder caches by content, so an
    /// unchanged tree costs a hash), and points its cases at the executable; a case whose sources do not build
    /// fails with the builder's line (the compiler's messages are on stderr, as `nse extension build` prints them).
    private func buildingExtensions(_ cases: [(Int, Result<ReplayCase, ReplayError>)]) async
        -> [(Int, Result<ReplayCase, ReplayError>)]
    {
        var built: [[String]: Result<String, ExtensionBuildError>] = [:]
        var updated = cases
        for (position, entry) in cases.enumerated() {
            guard case .success(var replayCase) = entry.1, let source = replayCase.extensionSource else { continue }
            if built[source] == nil {
                do throws(ExtensionBuildError) {
                    built[source] = .success(try await ExtensionBuilder(paths: source).build().executable)
                } catch {
                    built[source] = .failure(error)
                }
            }
            switch built[source]! {
            case .success(let executable):
                replayCase.extensionCommand = executable
                updated[position].1 = .success(replayCase)
            case .failure(let error):
                updated[position].1 = .failure(
                    ReplayError(file: replayCase.file, field: "extension_source", message: error.description))
            }
        }
        return updated
    }

    /// Runs the cases, `jobs` at a time, calling `progress` as each one ends (in completion order).
    public func run(files: [String], progress: @escaping @Sendable (CaseResult) -> Void) async -> [CaseResult] {
        var cases: [(Int, Result<ReplayCase, ReplayError>)] = []
        for (index, file) in files.enumerated() {
            do { cases.append((index, .success(try ReplayCase.load(file)))) } catch {
                cases.append((index, .failure(error)))
            }
        }
        if let filter {
            cases = cases.filter { entry in
                switch entry.1 {
                case .success(let replayCase): replayCase.name.contains(filter) || replayCase.file.contains(filter)
                case .failure(let error): error.file.contains(filter)
                }
            }
        }
        cases = await buildingExtensions(cases)
        let forkServers = ExtensionForkServers.make(extensionLaunch) { [logger] problem in
            logger.warning("extension processes exec'd", metadata: ["extension.problem": .string(problem)])
        }
        defer { forkServers?.stopAll() }
        var results: [(Int, CaseResult)] = []
        await withTaskGroup(of: (Int, CaseResult).self) { group in
            var iterator = cases.makeIterator()
            func launch(_ entry: (Int, Result<ReplayCase, ReplayError>)) {
                let (index, loaded) = entry
                group.addTask {
                    switch loaded {
                    case .failure(let error):
                        return (
                            index,
                            CaseResult(
                                name: Path.basename(error.file), file: error.file, passed: false, differences: [],
                                actual: nil, milliseconds: 0, error: error.description, logPath: nil)
                        )
                    case .success(let replayCase):
                        let runner = CaseRunner(
                            replayCase: replayCase,
                            workDirectory: Path.join(workRoot, "\(index)-\(Path.basename(replayCase.file))"),
                            extensionCommand: extensionCommand, logger: logger, extensionProcess: extensionProcess,
                            warmIdle: warmIdle, forkServers: forkServers)
                        return (index, await runner.run())
                    }
                }
            }
            for _ in 0..<jobs { if let next = iterator.next() { launch(next) } }
            while let finished = await group.next() {
                progress(finished.1)
                results.append(finished)
                if let next = iterator.next() { launch(next) }
            }
        }
        var ordered = results.sorted { $0.0 < $1.0 }.map(\.1)
        if update {
            for index in ordered.indices where Recorder.rerecord(ordered[index]) { ordered[index].rerecorded = true }
        }
        return ordered
    }
}

/// `--update`: writes a case's actual outcome back into its `expect`.
enum Recorder {
    /// - Returns: whether the case's expectations changed.
    static func rerecord(_ result: CaseResult) -> Bool {
        guard let actual = result.actual, result.error == nil,
            let bytes = try? FileSystem.readFile(result.file, limit: 1024 * 1024),
            var document = (try? JSON.parse(bytes))?.objectValue
        else { return false }
        let before = JSON.object(document)
        if let steps = document["steps"]?.arrayValue {
            // A sequence: each push step's expectations from its own result (the step's at the same index).
            let results = actual["steps"]?.arrayValue ?? []
            document["steps"] = .array(
                steps.enumerated().map { index, step in
                    guard var push = step.objectValue, push["expect"] != nil, push["app"] == nil,
                        index < results.count
                    else { return step }
                    push["expect"] = .object(expectations(push["expect"]?.objectValue ?? [:], from: results[index]))
                    return .object(push)
                })
        } else {
            document["expect"] = .object(expectations(document["expect"]?.objectValue ?? [:], from: actual))
        }
        guard before != .object(document) else { return false }
        try? FileSystem.writeAtomically(result.file, JSON.object(document).serialized(.pretty) + "\n")
        return true
    }

    /// A reason up to its first word that changes from run to run (a Call-ID, a UUID, a time in ms: any word with a
    /// digit), so that it still tells distinct failures apart ("sip-register-failed: the registrar answered 503" and
    /// "… 403" are not the same expectation). Three-digit status codes are kept: they are what differs.
    static func stablePrefix(of reason: String) -> String {
        var kept: [Substring] = []
        for word in reason.split(separator: " ", omittingEmptySubsequences: false) {
            let bare = word.filter { !",.;:()".contains($0) }
            let isStatus = bare.count == 3 && bare.allSatisfy(\.isNumber) && ("1"..."6").contains(bare.first!)
            if word.contains(where: \.isNumber) && !isStatus { break }
            kept.append(word)
        }
        while kept.last?.isEmpty == true { kept.removeLast() }
        let prefix = kept.joined(separator: " ")
        return prefix.isEmpty ? String(reason.prefix { $0 != ":" }) : prefix
    }

    /// `expect` brought up to date with one push's result.
    private static func expectations(_ previous: JSONObject, from actual: JSON) -> JSONObject {
        var expect = previous
        expect["outcome"] = actual["outcome"]
        if let reason = actual["reason"]?.stringValue { expect["reason"] = .string(stablePrefix(of: reason)) }
        expect["display"] = actual["display"]
        if actual["outcome"] == "rejected" { expect["apns_reason"] = actual["apns_reason"] }
        if let report = actual["call_report"]?.objectValue {
            expect["call_report"] = [
                "localized_caller_name": report["localized_caller_name"] ?? .null,
                "remote_handle": report["remote_handle"] ?? .null,
            ]
        } else if expect["call_report"] != nil {
            expect["call_report"] = .null
        }
        // Keep only the notification/info expectations that still hold.
        for key in ["notification", "info", "voip", "extension"] {
            guard let fields = expect[key]?.objectValue else { continue }
            let base: JSON? = key == "info" ? actual["extension"]?["info"] : actual[key]
            expect[key] = .object(
                JSONObject(fields.members.map { (key: $0.key, value: Expectations.lookup(base, $0.key) ?? .null) }))
        }
        return expect
    }
}

/// Reporters: text lines, JSON, JUnit XML.
public enum ReplayReport {
    /// One progress line: status, name, outcome, time.
    /// - Parameter logsKept: whether the cases' folders outlive the replay (`--keep`, `--work-dir`): a failure's line
    ///   points at its log only then.
    public static func line(_ result: CaseResult, logsKept: Bool = true) -> String {
        let status = result.passed ? "PASS" : (result.error != nil ? "ERROR" : "FAIL")
        // A sequence shows each push's outcome in order.
        let outcome =
            result.actual?["steps"]?.arrayValue.map {
                $0.compactMap { $0["outcome"]?.stringValue }.joined(separator: ",")
            }
            ?? result.actual?["outcome"]?.stringValue ?? "-"
        var text = "\(status)  \(result.name)  \(outcome)  \(Int(result.milliseconds)) ms"
        if let error = result.error { text += "\n      \(error)" }
        for difference in result.differences { text += "\n      \(difference)" }
        if !result.passed, let log = result.logPath {
            text += logsKept ? "\n      full log: \(log)" : "\n      full log: removed with the run (--keep keeps it)"
        }
        return text
    }

    /// The plain closing line.
    public static func summary(_ results: [CaseResult]) -> String {
        let passed = results.filter(\.passed).count
        return "\(passed) passed, \(results.count - passed) failed"
    }

    /// The results as one JSON document.
    public static func json(_ results: [CaseResult]) -> JSON {
        .array(
            results.map { result in
                [
                    "name": .string(result.name), "file": .string(result.file), "passed": .bool(result.passed),
                    "differences": .array(result.differences.map(JSON.string)), "error": .string(result.error),
                    "ms": .double((result.milliseconds * 10).rounded() / 10), "result": result.actual ?? .null,
                ]
            })
    }

    /// JUnit XML for CI systems.
    public static func junit(_ results: [CaseResult]) -> String {
        let failures = results.filter { !$0.passed && $0.error == nil }.count
        let errors = results.filter { $0.error != nil }.count
        let seconds = results.reduce(0) { $0 + $1.milliseconds } / 1000
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml +=
            "<testsuite name=\"nse replay\" tests=\"\(results.count)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"\(seconds)\">\n"
        for result in results {
            xml +=
                "  <testcase classname=\"\(escape(result.file))\" name=\"\(escape(result.name))\" time=\"\(result.milliseconds / 1000)\""
            if result.passed {
                xml += "/>\n"
                continue
            }
            xml += ">\n"
            if let error = result.error {
                xml += "    <error message=\"\(escape(error))\"/>\n"
            } else {
                let message = result.differences.joined(separator: "; ")
                xml +=
                    "    <failure message=\"\(escape(message))\">\(escape(result.differences.joined(separator: "\n")))</failure>\n"
            }
            xml += "  </testcase>\n"
        }
        return xml + "</testsuite>\n"
    }

    static func escape(_ text: String) -> String { XMLText.escape(text) }
}
