import NSESystem

/// What the paths given to `nse extension build` hold: the Swift files of the extension target, its `Info.plist`,
/// its `.entitlements` and its localized strings (`*.lproj`), as an Xcode extension target's folder does.
public struct ExtensionSources: Sendable, Equatable {
    /// Every `.swift` file, sorted by path.
    public var swiftFiles: [String] = []
    public var infoPlist: String?
    public var entitlements: String?
    /// `xx.lproj` folders, copied beside the executable (the extension's own bundle strings).
    public var localizations: [String] = []

    /// Folders searched recursively (hidden folders, `.build` and `*.xcodeproj` skipped), files taken as they are.
    public init(paths: [String]) throws(ExtensionBuildError) {
        for path in paths {
            if FileSystem.isDirectory(path) {
                try scan(path)
            } else if FileSystem.exists(path) {
                take(path)
            } else {
                throw ExtensionBuildError(.missing, "\(path): no such file or folder")
            }
        }
        swiftFiles.sort()
        localizations.sort()
        guard !swiftFiles.isEmpty else {
            throw ExtensionBuildError(.sources, "\(paths.joined(separator: " ")): no .swift file")
        }
    }

    private mutating func scan(_ folder: String) throws(ExtensionBuildError) {
        let names: [String]
        do { names = try FileSystem.contents(ofDirectory: folder) } catch {
            throw ExtensionBuildError(.io, "\(folder): \(error.description)")
        }
        for name in names where !name.hasPrefix(".") && name != ".build" && !name.hasSuffix(".xcodeproj") {
            let path = Path.join(folder, name)
            if name.hasSuffix(".lproj"), FileSystem.isDirectory(path) {
                localizations.append(path)
            } else if FileSystem.isDirectory(path) {
                try scan(path)
            } else {
                take(path)
            }
        }
    }

    private mutating func take(_ path: String) {
        let name = Path.basename(path)
        if name.hasSuffix(".swift") {
            swiftFiles.append(path)
        } else if name == "Info.plist", infoPlist == nil {
            infoPlist = path
        } else if name.hasSuffix(".entitlements"), entitlements == nil {
            entitlements = path
        }
    }

    /// Whether a file declares `class NAME` (the principal class must be one of the target's).
    public func declaresClass(_ name: String) -> Bool {
        swiftFiles.contains { path in
            guard let text = try? FileSystem.readText(path, limit: 16 << 20) else { return false }
            return Self.declares(name, in: text)
        }
    }

    static func declares(_ name: String, in text: String) -> Bool {
        // `class` followed by the name is a declaration (comments and strings are not told apart: a name in one as
        // well only makes a compiler error later, with its own message).
        var previous: Substring = ""
        return words(of: text) { word in
            defer { previous = word }
            return previous == "class" && word == name
        }
    }

    /// Whether a file names one of FoundationNetworking's types (or imports it), or reads something `contentsOf:` a
    /// URL: on iOS Foundation has them, on Linux they are FoundationNetworking's, which the build then imports into
    /// every file (`Data(contentsOf:)` of an `https` URL fails unless FoundationNetworking is loaded). The others do
    /// not load it and its 30 shared libraries (libcurl's): 8 ms of an extension's start, measured.
    public func usesFoundationNetworking() -> Bool {
        swiftFiles.contains { path in
            guard let text = try? FileSystem.readText(path, limit: 16 << 20) else { return true }
            return Self.words(of: text) { Self.foundationNetworkingNames.contains($0) }
        }
    }

    /// FoundationNetworking's public types and the module's own name. A word in a comment counts too: the cost of
    /// a false match is start-up time, never a build error.
    static let foundationNetworkingNames: Set<Substring> = [
        "FoundationNetworking", "URLSession", "URLSessionConfiguration", "URLSessionTask", "URLSessionDataTask",
        "URLSessionDownloadTask", "URLSessionUploadTask", "URLSessionStreamTask", "URLSessionWebSocketTask",
        "URLSessionDelegate", "URLSessionTaskDelegate", "URLSessionDataDelegate", "URLSessionDownloadDelegate",
        "URLSessionTaskMetrics", "URLRequest", "NSURLRequest", "NSMutableURLRequest", "URLResponse",
        "HTTPURLResponse", "CachedURLResponse", "URLCache", "URLCredential", "URLCredentialStorage",
        "URLProtectionSpace", "URLAuthenticationChallenge", "URLAuthenticationChallengeSender", "URLProtocol",
        "URLProtocolClient", "HTTPCookie", "HTTPCookieStorage", "HTTPCookiePropertyKey", "NSURLSession",
        // Data, NSData, String, NSString, XMLParser…(contentsOf: url): a file or a download.
        "contentsOf", "contentsOfURL",
    ]

    /// Calls `body` with each identifier-like word of `text` in order until it returns true.
    private static func words(of text: String, until body: (Substring) -> Bool) -> Bool {
        let utf8 = text.utf8
        var start: String.Index?
        var index = utf8.startIndex
        while true {
            let isWord: Bool
            if index < utf8.endIndex {
                let byte = utf8[index]
                isWord =
                    byte >= 0x80 || byte == UInt8(ascii: "_") || (byte >= 0x30 && byte <= 0x39)
                    || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
            } else {
                isWord = false
            }
            if isWord {
                if start == nil { start = index }
            } else if let first = start {
                if body(text[first..<index]) { return true }
                start = nil
            }
            guard index < utf8.endIndex else { return false }
            index = utf8.index(after: index)
        }
    }
}
