public import NSEJSON

/// The iPhone a device is (`nse device set --model "iPhone X"`): with the iOS release, it sets the memory an
/// extension may use before iOS kills it, which Apple does not document and users have measured
/// (docs/media.md, "The memory ceiling").
public struct DeviceModel: Sendable, Equatable, CustomStringConvertible, JSONConvertible {
    public var name: String
    /// Its memory, in GB.
    public var memory: Int
    /// The first and the last iOS release it runs.
    public var releases: ClosedRange<Int>

    /// iPhones from the 5s (the oldest that runs iOS 10's extensions with 64-bit code still supported) on.
    public static let all: [DeviceModel] = [
        DeviceModel(name: "iPhone 5s", memory: 1, releases: 10...12),
        DeviceModel(name: "iPhone 6", memory: 1, releases: 10...12),
        DeviceModel(name: "iPhone 6 Plus", memory: 1, releases: 10...12),
        DeviceModel(name: "iPhone 6s", memory: 2, releases: 10...15),
        DeviceModel(name: "iPhone SE", memory: 2, releases: 10...15),
        DeviceModel(name: "iPhone 7", memory: 2, releases: 10...15),
        DeviceModel(name: "iPhone 8", memory: 2, releases: 11...16),
        DeviceModel(name: "iPhone X", memory: 3, releases: 11...16),
        DeviceModel(name: "iPhone XR", memory: 3, releases: 12...18),
        DeviceModel(name: "iPhone XS", memory: 4, releases: 12...18),
        DeviceModel(name: "iPhone 11", memory: 4, releases: 13...26),
        DeviceModel(name: "iPhone 12", memory: 4, releases: 14...26),
        DeviceModel(name: "iPhone 13", memory: 4, releases: 15...26),
        DeviceModel(name: "iPhone 14", memory: 6, releases: 16...26),
        DeviceModel(name: "iPhone 15", memory: 6, releases: 17...26),
        DeviceModel(name: "iPhone 16", memory: 8, releases: 18...26),
        DeviceModel(name: "iPhone 17", memory: 8, releases: 26...26),
    ]

    public static var jsonKind: String { "an iPhone model such as \"iPhone X\" (nse device set --model)" }

    /// The model named `text`, spelled as Apple does or in any case with `-` for spaces (`iphone-x`).
    public init?(_ text: String) {
        let wanted = Self.normalized(text)
        guard let found = Self.all.first(where: { Self.normalized($0.name) == wanted }) else { return nil }
        self = found
    }

    init(name: String, memory: Int, releases: ClosedRange<Int>) {
        self.name = name
        self.memory = memory
        self.releases = releases
    }

    public init(json: JSON) throws(JSONFieldError) {
        guard case .string(let text) = json, let model = DeviceModel(text) else {
            throw JSONFieldError(expected: Self.jsonKind, butGot: json)
        }
        self = model
    }

    public var json: JSON { .string(name) }
    public var description: String { name }

    /// Why this model cannot run `release`, nil when it can.
    public func conflict(with release: IOSVersion) -> String? {
        releases.contains(release.major)
            ? nil : "the \(name) runs iOS \(releases.lowerBound) to \(releases.upperBound), not iOS \(release)"
    }

    private static func normalized(_ text: String) -> String {
        String(text.lowercased().map { $0 == "-" || $0 == "_" ? " " : $0 })
    }
}

extension IOSVersion {
    /// The footprint iOS lets a Notification Service Extension reach on `model` before killing it, in KB: 24 MB
    /// from iOS 15 (`ActiveHard 24 MB` in crash reports of iOS 17, nextcloud/talk-ios #1223; Delta Chat's 24 MB,
    /// deltachat-ios #2477); before, 12 MB on a 1 GB iPhone (an iPhone 5s) and 16 MB on the others (an iPhone X;
    /// element-ios #3868, iOS 13 and 14). Which release between 14 and 17 raised it is not known: nse takes 15.
    public func extensionMemoryLimitKilobytes(on model: DeviceModel?) -> Int {
        if major >= 15 { return 24 * 1024 }
        return (model?.memory ?? 2) < 2 ? 12 * 1024 : 16 * 1024
    }
}
