public import NSEJSON

/// One scripted misbehaviour of `nse files`, for a client's own tests: downloads that crawl, stop short, vanish,
/// arrive altered or late. Made from `--fault SPEC` or `POST /control/faults` (docs/files.md, "Faults").
public struct FileFault: Sendable, Equatable {
    public enum Effect: Sendable, Equatable {
        /// The body is sent at this many bytes per second.
        case slow(bytesPerSecond: Int)
        /// The connection is closed once this many bytes of the body are sent (Content-Length promised them all).
        case truncate(afterBytes: Int)
        /// 404, as for a file that does not exist.
        case notFound
        /// The file's first and last bytes are sent inverted: its SHA-256 no longer matches.
        case wrongHash
        /// This many seconds pass before the answer.
        case delay(seconds: Double)

        /// The rule's name in JSON and on the command line.
        public var name: String {
            switch self {
            case .slow: "slow"
            case .truncate: "truncate"
            case .notFound: "not-found"
            case .wrongHash: "wrong-hash"
            case .delay: "delay"
            }
        }

        /// Whether it changes the body, which a HEAD answer does not have.
        var altersBody: Bool {
            switch self {
            case .slow, .truncate, .wrongHash: true
            case .notFound, .delay: false
            }
        }
    }

    public var effect: Effect
    /// The file the rule is for; nil: every file.
    public var file: String?
    /// How many downloads the rule applies to; nil: every one until it is removed.
    public var count: Int?

    public static let names = ["slow", "truncate", "not-found", "wrong-hash", "delay"]
    /// At most this long a delay (seconds): past it a client has given up anyway.
    public static let maxDelay = 300.0
    public static let maxCount = 1_000_000

    public init(_ effect: Effect, file: String? = nil, count: Int? = nil) {
        self.effect = effect
        self.file = file
        self.count = count
    }

    /// Why a rule cannot be made: one line naming the field.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// From its JSON form: `{"fault": NAME, …its value…, "file": ID, "count": N}`, the value `bytes_per_second`
    /// (slow), `after_bytes` (truncate) or `seconds` (delay).
    public init(json: JSON) throws(Invalid) {
        guard let object = json.objectValue else { throw Invalid(description: "a fault is a JSON object") }
        guard let name = object["fault"]?.stringValue else {
            throw Invalid(description: "a fault needs \"fault\": one of \(Self.names.joined(separator: ", "))")
        }
        var known: Set<String> = ["fault", "file", "count"]
        switch name {
        case "slow":
            known.insert("bytes_per_second")
            guard let rate = object["bytes_per_second"]?.intValue, rate >= 1, rate <= Int64(Int32.max) else {
                throw Invalid(description: "fault slow needs \"bytes_per_second\": a whole number from 1")
            }
            effect = .slow(bytesPerSecond: Int(rate))
        case "truncate":
            known.insert("after_bytes")
            guard let bytes = object["after_bytes"]?.intValue, bytes >= 0 else {
                throw Invalid(description: "fault truncate needs \"after_bytes\": a whole number from 0")
            }
            effect = .truncate(afterBytes: Int(bytes))
        case "delay":
            known.insert("seconds")
            guard let seconds = object["seconds"]?.doubleValue, seconds >= 0, seconds <= Self.maxDelay else {
                throw Invalid(description: "fault delay needs \"seconds\": from 0 to \(Int(Self.maxDelay))")
            }
            effect = .delay(seconds: seconds)
        case "not-found": effect = .notFound
        case "wrong-hash": effect = .wrongHash
        default:
            throw Invalid(description: "unknown fault \"\(name)\" (known: \(Self.names.joined(separator: ", ")))")
        }
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw Invalid(description: "unknown field \"\(unknown)\" for fault \(name)")
        }
        if let file = object["file"], !file.isNull {
            guard let id = file.stringValue, BlobID.isValid(id) else {
                throw Invalid(description: "fault file must be a file id (32 lowercase hex digits)")
            }
            self.file = id
        }
        if let count = object["count"], !count.isNull {
            guard let number = count.intValue, number >= 1, number <= Self.maxCount else {
                throw Invalid(description: "fault count must be between 1 and \(Self.maxCount)")
            }
            self.count = Int(number)
        }
    }

    /// From `--fault`: the name, its value after a colon, then optional `,file=ID` and `,count=N`:
    /// `slow:20000`, `truncate:1000,count=1`, `delay:2.5`, `not-found,file=ID`, `wrong-hash`.
    public init(spec: String) throws(Invalid) {
        let items = spec.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let head = items[0].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var object: JSONObject = ["fault": .string(head[0])]
        let value = head.count == 2 ? head[1] : nil
        let valueKey: String? =
            switch head[0] {
            case "slow": "bytes_per_second"
            case "truncate": "after_bytes"
            case "delay": "seconds"
            default: nil
            }
        switch (valueKey, value) {
        case (let key?, let value?):
            if key == "seconds" {
                guard let seconds = Double(value) else {
                    throw Invalid(description: "--fault \(spec): \(head[0]):SECONDS")
                }
                object[key] = .double(seconds)
            } else {
                guard let number = Int64(value) else { throw Invalid(description: "--fault \(spec): \(head[0]):N") }
                object[key] = .int(number)
            }
        case (let key?, nil):
            throw Invalid(description: "--fault \(spec): \(head[0]) needs a value (\(head[0]):…, its \(key))")
        case (nil, _?):
            throw Invalid(description: "--fault \(spec): \(head[0]) takes no value")
        case (nil, nil):
            break
        }
        for item in items.dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            switch (pair[0], pair.count == 2 ? pair[1] : nil) {
            case ("file", let id?): object["file"] = .string(id)
            case ("count", let text?):
                guard let number = Int64(text) else { throw Invalid(description: "--fault \(spec): count=N") }
                object["count"] = .int(number)
            default:
                throw Invalid(description: "--fault \(spec): \"\(item)\" is neither file=ID nor count=N")
            }
        }
        do { try self.init(json: .object(object)) } catch { throw Invalid(description: "--fault \(spec): \(error)") }
    }

    /// The JSON form, as `GET /control/faults` lists it.
    public var json: JSON {
        var object: JSONObject = ["fault": .string(effect.name)]
        switch effect {
        case .slow(let rate): object["bytes_per_second"] = .int(Int64(rate))
        case .truncate(let bytes): object["after_bytes"] = .int(Int64(bytes))
        case .delay(let seconds): object["seconds"] = .double(seconds)
        case .notFound, .wrongHash: break
        }
        object["file"] = .string(file)
        object["count"] = .int(count)
        return .object(object)
    }
}
