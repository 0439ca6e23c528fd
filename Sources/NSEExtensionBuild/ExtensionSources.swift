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
        // The words of the text, in order: `class` followed by the name is a declaration (comments and strings
        // are not told apart: a name in one as well only makes a compiler error later, with its own message).
        var previous = ""
        var word = ""
        for character in text + " " {
            if character.isLetter || character.isNumber || character == "_" {
                word.append(character)
            } else if !word.isEmpty {
                if previous == "class", word == name { return true }
                previous = word
                word = ""
            }
        }
        return false
    }
}
