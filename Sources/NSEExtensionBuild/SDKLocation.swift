import NSESystem

/// Where the SDK a user's extension is compiled against is: the folder with `libNSESDK.a` and `Modules/` (the
/// package's build folder, beside the `nse` binaries, or `$NSE_SDK_DIR`), the module maps of the C libraries its
/// modules use (the package's `Sources/C*/module.modulemap`) and the overlays compiled on first use (`SDK/`).
public struct SDKLocation: Sendable, Equatable {
    public var libraryDirectory: String
    public var modulesDirectory: String
    public var moduleMaps: [String]
    /// The package's `SDK/` folder: the overlays (`os`, `OSLog`) and the Clang module they sit on.
    public var overlaySources: String

    /// The module maps and the headers beside them: what a compiled module or extension depends on (the `os` shim's
    /// headers declare C functions, inline).
    var moduleFiles: [String] {
        moduleMaps.flatMap { map in
            let folder = Path.dirname(map)
            let headers = ((try? FileSystem.contents(ofDirectory: folder)) ?? []).filter { $0.hasSuffix(".h") }
            return [map] + headers.sorted().map { Path.join(folder, $0) }
        }
    }

    /// The static library every extension links (the SDK's modules and what they use, one copy of each).
    public var library: String { Path.join(libraryDirectory, "libNSESDK.a") }

    /// The SDK beside the running executable, or named by `NSE_SDK_DIR`.
    public static func find() throws(ExtensionBuildError) -> SDKLocation {
        let directory =
            Environment.get("NSE_SDK_DIR") ?? FileSystem.executablePath().map(Path.dirname) ?? "."
        let library = Path.join(directory, "libNSESDK.a")
        let modules = Path.join(directory, "Modules")
        guard FileSystem.exists(library), FileSystem.isDirectory(modules) else {
            throw ExtensionBuildError(
                .unavailable,
                "no SDK in \(directory) (libNSESDK.a and Modules/): build nse with make build or swift build, or set NSE_SDK_DIR"
            )
        }
        // The package the build folder belongs to: upward until Package.swift beside Sources/.
        var root = FileSystem.resolvedPath(directory) ?? directory
        while root != "/", !FileSystem.exists(Path.join(root, "Package.swift")) { root = Path.dirname(root) }
        func maps(in folder: String, prefix: String) -> [String] {
            // A system library's map is in its folder, a C target's in its include/.
            ((try? FileSystem.contents(ofDirectory: folder)) ?? []).filter { $0.hasPrefix(prefix) }.compactMap {
                [Path.join(folder, $0, "module.modulemap"), Path.join(folder, $0, "include", "module.modulemap")]
                    .first(where: FileSystem.exists)
            }
        }
        let overlays = Path.join(root, "SDK")
        let found = maps(in: Path.join(root, "Sources"), prefix: "C") + maps(in: overlays, prefix: "")
        guard !found.isEmpty, FileSystem.isDirectory(overlays) else {
            throw ExtensionBuildError(
                .unavailable,
                "the SDK in \(directory) is not in an nse package (no Sources/C*/module.modulemap and SDK/ above it)")
        }
        return SDKLocation(
            libraryDirectory: directory, modulesDirectory: modules, moduleMaps: found.sorted(),
            overlaySources: overlays)
    }
}
