import NSESystem

/// Where the SDK a user's extension is compiled against is: the folder with `libNSESDK.so` and `Modules/` (the
/// package's build folder, beside the `nse` binaries, or `$NSE_SDK_DIR`), and the module maps of the C libraries its
/// modules use (the package's `Sources/C*/module.modulemap`).
public struct SDKLocation: Sendable, Equatable {
    public var libraryDirectory: String
    public var modulesDirectory: String
    public var moduleMaps: [String]

    /// The SDK beside the running executable, or named by `NSE_SDK_DIR`.
    public static func find() throws(ExtensionBuildError) -> SDKLocation {
        let directory =
            Environment.get("NSE_SDK_DIR") ?? FileSystem.executablePath().map(Path.dirname) ?? "."
        let library = Path.join(directory, "libNSESDK.so")
        let modules = Path.join(directory, "Modules")
        guard FileSystem.exists(library), FileSystem.isDirectory(modules) else {
            throw ExtensionBuildError(
                .unavailable,
                "no SDK in \(directory) (libNSESDK.so and Modules/): build nse with make build or swift build, or set NSE_SDK_DIR"
            )
        }
        // The package the build folder belongs to: upward until Package.swift beside Sources/.
        var root = FileSystem.resolvedPath(directory) ?? directory
        while root != "/", !FileSystem.exists(Path.join(root, "Package.swift")) { root = Path.dirname(root) }
        let sources = Path.join(root, "Sources")
        let maps = ((try? FileSystem.contents(ofDirectory: sources)) ?? []).filter { $0.hasPrefix("C") }.compactMap {
            let map = Path.join(sources, $0, "module.modulemap")
            return FileSystem.exists(map) ? map : nil
        }
        guard !maps.isEmpty else {
            throw ExtensionBuildError(
                .unavailable,
                "the SDK in \(directory) is not in an nse package (no Sources/C*/module.modulemap above it)")
        }
        return SDKLocation(libraryDirectory: directory, modulesDirectory: modules, moduleMaps: maps.sorted())
    }
}
