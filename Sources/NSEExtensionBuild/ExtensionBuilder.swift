import NSECrypto
import NSESystem
import Subprocess
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Builds a user's extension: the sources checked as Xcode checks an extension target, one generated line that
/// starts it (`NSEServiceExtension.main { Principal() }`, where iOS has `NSExtensionMain`), swiftc against the SDK,
/// the executable cached under the hash of everything that went into it (an unchanged tree builds in the time it
/// takes to hash it).
public struct ExtensionBuilder: Sendable {
    public enum Configuration: String, Sendable, CaseIterable {
        case debug, release
    }

    public var paths: [String]
    public var principalClass: String?
    public var infoPlist: String?
    public var entitlements: String?
    public var configuration = Configuration.debug
    /// Xcode's default for an extension target is Swift 5 mode; `6` for code written for it.
    public var swiftVersion = "5"
    /// Xcode's `PRODUCT_BUNDLE_IDENTIFIER`: the Info.plist's `CFBundleIdentifier` (``defaultBundleIdentifier``
    /// unless given).
    public var bundleIdentifier: String?
    /// Xcode's identifier for a Notification Service Extension target of `nse device init`'s app (`org.example.app`):
    /// the app's and the target's name.
    public static let defaultBundleIdentifier = "org.example.app.NotificationService"

    /// What is wrong with a bundle identifier, by Apple's rule (letters, digits, hyphens and periods); nil if nothing.
    public static func bundleIdentifierProblem(_ identifier: String) -> String? {
        let allowed = identifier.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-.".unicodeScalars.contains(scalar))
        }
        return identifier.isEmpty || !allowed
            ? "a bundle identifier may have only letters, digits, hyphens and periods" : nil
    }
    /// Where the cache is: `$NSE_CACHE_DIR`, else `$XDG_CACHE_HOME/nse`, else `~/.cache/nse`; it keeps the 64 most
    /// recently used builds (`$NSE_CACHE_EXTENSIONS`, ``ExtensionCache``).
    public var cacheDirectory = ExtensionBuilder.defaultCacheDirectory()

    public init(paths: [String]) {
        self.paths = paths
    }

    /// What a build made.
    public struct Product: Sendable, Equatable {
        /// The executable.
        public var executable: String
        /// Whether it came from the cache.
        public var cached: Bool
        public var principalClass: String
        public var entitlements: Entitlements?
    }

    public static func defaultCacheDirectory() -> String {
        if let explicit = Environment.get("NSE_CACHE_DIR") { return explicit }
        if let cache = Environment.get("XDG_CACHE_HOME"), !cache.isEmpty { return Path.join(cache, "nse") }
        return Path.join(Environment.get("HOME") ?? "/tmp", ".cache", "nse")
    }

    /// Builds (or finds in the cache) the executable; the compiler's messages go to stderr as it prints them.
    public func build() async throws(ExtensionBuildError) -> Product {
        let sources = try ExtensionSources(paths: paths)
        let info = try (infoPlist ?? sources.infoPlist).map { path throws(ExtensionBuildError) in
            try InfoPlist(contentsOf: path)
        }
        if let info, let point = info.extensionPoint, point != InfoPlist.serviceExtensionPoint {
            throw ExtensionBuildError(
                .sources,
                "\(infoPlist ?? sources.infoPlist ?? "Info.plist"): NSExtensionPointIdentifier is \(point), not \(InfoPlist.serviceExtensionPoint): not a Notification Service Extension"
            )
        }
        if let bundleIdentifier, let problem = Self.bundleIdentifierProblem(bundleIdentifier) {
            throw ExtensionBuildError(.sources, "--bundle-identifier \(bundleIdentifier): \(problem)")
        }
        guard let principal = principalClass ?? info?.principalClassName else {
            throw ExtensionBuildError(
                .sources, "no principal class: give --principal-class, or an Info.plist with NSExtensionPrincipalClass")
        }
        guard principal.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), sources.declaresClass(principal)
        else {
            throw ExtensionBuildError(
                .sources, "the principal class \(principal) is declared in none of the Swift files")
        }
        let entitlementsFile = entitlements ?? sources.entitlements
        let granted = try entitlementsFile.map { path throws(ExtensionBuildError) in
            try Entitlements(contentsOf: path)
        }
        let cache = ExtensionCache(
            directory: Path.join(cacheDirectory, "extensions"),
            limit: try ExtensionCache.limit(from: Environment.get(ExtensionCache.limitVariable)))
        let sdk = try SDKLocation.find()
        let key = try cacheKey(sources: sources, principal: principal, sdk: sdk)
        let folder = Path.join(cache.directory, key)
        let layout = BundleLayout(extensionIdentifier: effectiveIdentifier(info))
        let executable = Path.join(folder, layout.extensionBundle, "NotificationServiceExtension")
        if FileSystem.isExecutable(executable) {
            cache.used(folder)
            return Product(executable: executable, cached: true, principalClass: principal, entitlements: granted)
        }
        try await compile(
            sources: sources, principal: principal, hasBundleIdentifier: info?.bundleIdentifier != nil, sdk: sdk,
            into: folder, layout: layout)
        cache.used(folder)
        cache.prune()
        return Product(executable: executable, cached: false, principalClass: principal, entitlements: granted)
    }

    /// The extension's bundle identifier as the build writes it: the Info.plist's when it names one, else
    /// `--bundle-identifier`, else ``defaultBundleIdentifier``.
    private func effectiveIdentifier(_ info: InfoPlist?) -> String {
        if let written = info?.bundleIdentifier, !written.contains("$") { return written }
        return bundleIdentifier ?? Self.defaultBundleIdentifier
    }

    /// The hash of the sources, the Info.plist, the entitlements, the strings, the options, the SDK's library and
    /// the compiler: what changes the executable.
    private func cacheKey(sources: ExtensionSources, principal: String, sdk: SDKLocation) throws(ExtensionBuildError)
        -> String
    {
        var material: [UInt8] = Array("nse-extension-build 10\n".utf8)
        func add(_ text: String) { material += Array(text.utf8) + [0] }
        func addFile(_ path: String) throws(ExtensionBuildError) {
            let bytes: [UInt8]?
            do { bytes = try FileSystem.readFile(path, limit: 64 << 20) } catch {
                throw ExtensionBuildError(.io, error.description)
            }
            add(path)
            material += Digest.sha256(bytes ?? [])
        }
        add(configuration.rawValue)
        add(swiftVersion)
        add(principal)
        add(bundleIdentifier ?? Self.defaultBundleIdentifier)
        add(sources.usesFoundationNetworking() ? "FoundationNetworking" : "Foundation")
        for file in sources.swiftFiles { try addFile(file) }
        for file in [infoPlist ?? sources.infoPlist, entitlements ?? sources.entitlements].compactMap({ $0 }) {
            try addFile(file)
        }
        for folder in sources.localizations {
            for name in (try? FileSystem.contents(ofDirectory: folder)) ?? [] {
                try addFile(Path.join(folder, name))
            }
        }
        for path in [sdk.library] + sdk.moduleFiles {
            add("\(path) \(FileSystem.stamp(path).map { "\($0)" } ?? "")")
        }
        add(Environment.get("SWIFTC") ?? "swiftc")
        return Hex.encode(Digest.sha256(material))
    }

    private func compile(
        sources: ExtensionSources, principal: String, hasBundleIdentifier: Bool, sdk: SDKLocation, into folder: String,
        layout: BundleLayout
    ) async throws(ExtensionBuildError) {
        let compiler = Environment.get("SWIFTC") ?? "swiftc"
        let overlays = try await SDKOverlays(sdk: sdk, cacheDirectory: cacheDirectory, compiler: compiler).folder()
        let staging = folder + ".building-\(getpid())"
        do {
            try? FileSystem.removeTree(staging)
            try FileSystem.createDirectory(staging)
            let bundle = Path.join(staging, layout.extensionBundle)
            try FileSystem.createDirectory(bundle)
            // Where iOS starts an extension (NSExtensionMain, the principal class by name), nse's one line; a
            // target that has its own main.swift (a SwiftPM one, docs/sdk.md) starts itself.
            let main = Path.join(staging, "NSEExtensionEntry.swift")
            let hasMain = sources.swiftFiles.contains { Path.basename($0) == "main.swift" }
            if !hasMain {
                try FileSystem.writeAtomically(
                    main,
                    """
                    import UserNotifications

                    @main enum NSEExtensionEntry {
                        static func main() { NSEServiceExtension.main { \(principal)() } }
                    }

                    """)
            }
            var arguments = [
                "-swift-version", swiftVersion, "-module-name", "NotificationServiceExtension", "-I", overlays, "-I",
                sdk.modulesDirectory,
            ]
            // URLSession is FoundationNetworking's on Linux: every file sees it, as with Foundation on iOS, when the
            // target uses it. And it is linked in: Foundation finds its loader of http URLs by name at run time
            // (`Data(contentsOf:)`), which a static link leaves out of a target that names none of its types.
            var generated = hasMain ? [] : [main]
            if sources.usesFoundationNetworking() {
                arguments += ["-Xfrontend", "-import-module", "-Xfrontend", "FoundationNetworking"]
                let linking = Path.join(staging, "NSEFoundationNetworking.swift")
                try FileSystem.writeAtomically(
                    linking,
                    """
                    import FoundationNetworking

                    @_optimize(none) public func _nseLinksFoundationNetworking() -> Any.Type { URLSession.self }

                    """)
                generated.append(linking)
            }
            arguments += configuration == .release ? ["-O"] : ["-Onone", "-g"]
            // The Swift runtime and Foundation linked in, the executable not position-independent: what iOS's shared
            // cache gives an extension, code loaded prelinked. Its data then needs no relocation at start, so its
            // footprint is its own (0.7 MB for the template against 1.7 MB on the shared runtime, 11 MB static and
            // position-independent) and it starts in half the time (7.6 ms against 14.1; docs/sdk.md).
            arguments += ["-static-stdlib", "-Xclang-linker", "-no-pie"]
            for map in sdk.moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=\(map)"] }
            arguments += sources.swiftFiles + generated
            // The whole SDK, linked in after the objects that use it: one copy of every module, on the toolchain's
            // Swift runtime.
            arguments.append(sdk.library)
            // BoringSSL (CryptoKit's swift-crypto) is partly C++: SwiftPM links the C++ runtime for such targets by
            // itself; this command must say so.
            arguments.append("-lstdc++")
            arguments += ["-o", Path.join(bundle, "NotificationServiceExtension")]
            // Its messages as it prints them, less the toolchain's own (`CompilerMessages`); in colour on a
            // terminal, as swiftc does when it writes to one itself.
            if isatty(2) != 0 { arguments.append("-color-diagnostics") }
            let result = try await run(
                compiler.contains("/") ? .path(.init(compiler)) : .name(compiler), arguments: .init(arguments),
                input: .none, output: .fileDescriptor(.standardError, closeAfterSpawningProcess: false),
                error: .sequence
            ) { execution in
                var messages = CompilerMessages()
                for try await buffer in execution.standardError {
                    buffer.withUnsafeBytes { messages.feed($0) }
                }
                messages.finish()
            }
            guard case .exited(0) = result.terminationStatus else {
                try? FileSystem.removeTree(staging)
                throw ExtensionBuildError(.sources, "swiftc could not build the extension (its messages are above)")
            }
            for file in generated { try? FileSystem.remove(file) }
            // Beside the executable, where Foundation's Bundle.main looks (infoDictionary, bundleIdentifier).
            // A binary property list is copied as it is; an XML one has its build settings filled in, and its
            // `CFBundleIdentifier` if it has none (Xcode adds it from PRODUCT_BUNDLE_IDENTIFIER); a target without
            // one gets the least Xcode would write.
            let identifier = bundleIdentifier ?? Self.defaultBundleIdentifier
            var plistBytes: [UInt8]?
            if let plist = infoPlist ?? sources.infoPlist {
                plistBytes = try FileSystem.readFile(plist, limit: 16 << 20) ?? []
            }
            let copied: [UInt8]
            if let bytes = plistBytes, bytes.starts(with: Array("bplist".utf8)) {
                copied = bytes
            } else {
                var text = Self.expandingBuildSettings(
                    plistBytes.map { String(decoding: $0, as: UTF8.self) } ?? Self.minimalInfoPlist,
                    bundleIdentifier: identifier)
                if !hasBundleIdentifier { text = Self.addingBundleIdentifier(identifier, to: text) }
                copied = Array(text.utf8)
            }
            try FileSystem.writeAtomically(Path.join(bundle, "Info.plist"), copied)
            for localization in sources.localizations {
                try copyTree(localization, to: Path.join(bundle, Path.basename(localization)))
            }
            try FileSystem.writeAtomically(
                Path.join(staging, layout.appBundle, "Info.plist"), layout.appInfoPlist)
            try? FileSystem.removeTree(folder)
            try FileSystem.createDirectory(Path.dirname(folder))
            guard rename(staging, folder) == 0 else { throw SystemError.current("rename", path: folder) }
        } catch let error as ExtensionBuildError {
            throw error
        } catch let error as SystemError {
            try? FileSystem.removeTree(staging)
            throw ExtensionBuildError(.io, error.description)
        } catch {
            try? FileSystem.removeTree(staging)
            throw ExtensionBuildError(.unavailable, "cannot run swiftc: \(error)")
        }
    }

    /// The build settings Xcode puts into an extension's Info.plist that have one answer here (`$(NAME)` or
    /// `${NAME}`), and `PRODUCT_BUNDLE_IDENTIFIER` (``bundleIdentifier``); the others (versions, the team) stay as
    /// written: nse does not know them.
    static let buildSettings = [
        "PRODUCT_MODULE_NAME": "NotificationServiceExtension", "PRODUCT_NAME": "NotificationServiceExtension",
        "EXECUTABLE_NAME": "NotificationServiceExtension", "TARGET_NAME": "NotificationServiceExtension",
        "DEVELOPMENT_LANGUAGE": "en", "PRODUCT_BUNDLE_PACKAGE_TYPE": "XPC!",
    ]

    static func expandingBuildSettings(_ text: String, bundleIdentifier: String) -> String {
        var expanded = text
        for (name, value) in buildSettings.merging(
            ["PRODUCT_BUNDLE_IDENTIFIER": bundleIdentifier], uniquingKeysWith: { $1 })
        {
            expanded = expanded.replacing("$(\(name))", with: value).replacing("${\(name)}", with: value)
        }
        return expanded
    }

    /// An XML property list with `CFBundleIdentifier` first in its top dictionary (the first after the `<plist>`
    /// tag; an empty `<dict/>` opened), for one that has none.
    static func addingBundleIdentifier(_ identifier: String, to text: String) -> String {
        let key = "\n\t<key>CFBundleIdentifier</key>\n\t<string>\(identifier)</string>"
        let start = text.firstRange(of: "<plist")?.upperBound ?? text.startIndex
        let rest = text[start...]
        let open = rest.firstRange(of: "<dict>")
        let empty = rest.firstRange(of: "<dict/>")
        var added = text
        if let empty, open.map({ empty.lowerBound < $0.lowerBound }) ?? true {
            added.replaceSubrange(empty, with: "<dict>" + key + "\n</dict>")
        } else if let open {
            added.insert(contentsOf: key, at: open.upperBound)
        }
        return added
    }

    /// The Info.plist of a target that has none (`--principal-class` named the class).
    static let minimalInfoPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>CFBundleExecutable</key>
        \t<string>$(EXECUTABLE_NAME)</string>
        \t<key>CFBundlePackageType</key>
        \t<string>$(PRODUCT_BUNDLE_PACKAGE_TYPE)</string>
        </dict>
        </plist>

        """

    private func copyTree(_ source: String, to destination: String) throws(SystemError) {
        if FileSystem.isDirectory(source) {
            try FileSystem.createDirectory(destination)
            for name in try FileSystem.contents(ofDirectory: source) {
                try copyTree(Path.join(source, name), to: Path.join(destination, name))
            }
        } else if let bytes = try FileSystem.readFile(source, limit: 64 << 20) {
            try FileSystem.writeAtomically(destination, bytes)
        }
    }
}
