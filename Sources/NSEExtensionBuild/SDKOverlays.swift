import NSECrypto
import NSESystem
import Subprocess
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The modules of the SDK that SwiftPM must not build among the package's own (SDK/README.md): `os` (the Swift
/// overlay of the Clang module `os`, so `import os.log` resolves), `OSLog` and `Security`. Compiled once per SDK and compiler into
/// the cache, then found there by every extension build: `-I` the folder this returns.
struct SDKOverlays {
    var sdk: SDKLocation
    var cacheDirectory: String
    var compiler: String

    /// The overlays' module folder, compiled now unless the cache has it.
    func folder() async throws(ExtensionBuildError) -> String {
        let key = try cacheKey()
        let folder = Path.join(cacheDirectory, "sdk-overlays", key)
        if FileSystem.exists(Path.join(folder, "Security.swiftmodule")) { return folder }
        let staging = folder + ".building-\(getpid())"
        do {
            try? FileSystem.removeTree(staging)
            try FileSystem.createDirectory(staging)
            try await compile("os", ["-import-underlying-module"], into: staging)
            try await compile("OSLog", [], into: staging)
            try await compile("Security", [], into: staging)
            try? FileSystem.removeTree(folder)
            try FileSystem.createDirectory(Path.dirname(folder))
            // Another build may have made it meanwhile: theirs is as good.
            if rename(staging, folder) != 0 {
                try? FileSystem.removeTree(staging)
                guard FileSystem.exists(Path.join(folder, "Security.swiftmodule")) else {
                    throw SystemError.current("rename", path: folder)
                }
            }
        } catch let error as SystemError {
            try? FileSystem.removeTree(staging)
            throw ExtensionBuildError(.io, error.description)
        } catch let error as ExtensionBuildError {
            try? FileSystem.removeTree(staging)
            throw error
        } catch {
            try? FileSystem.removeTree(staging)
            throw ExtensionBuildError(.unavailable, "cannot run swiftc: \(error)")
        }
        return folder
    }

    private func compile(_ module: String, _ flags: [String], into staging: String) async throws {
        var arguments = [
            "-emit-module", "-parse-as-library", "-swift-version", "6", "-module-name", module,
            "-emit-module-path", Path.join(staging, module + ".swiftmodule"), "-I", staging, "-I",
            sdk.modulesDirectory,
        ]
        arguments += flags
        for map in sdk.moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=\(map)"] }
        arguments.append(Path.join(sdk.overlaySources, module, module + ".swift"))
        let result = try await run(
            compiler.contains("/") ? .path(.init(compiler)) : .name(compiler), arguments: .init(arguments),
            output: .fileDescriptor(.standardError, closeAfterSpawningProcess: false),
            error: .fileDescriptor(.standardError, closeAfterSpawningProcess: false))
        guard case .exited(0) = result.terminationStatus else {
            throw ExtensionBuildError(
                .unavailable, "swiftc could not build the SDK's \(module) module (its messages are above)")
        }
    }

    /// The overlays' sources, the maps they see, the module they re-export and the compiler.
    private func cacheKey() throws(ExtensionBuildError) -> String {
        var material: [UInt8] = Array("nse-sdk-overlays 5\n".utf8)
        for module in ["os", "OSLog", "Security"] {
            let path = Path.join(sdk.overlaySources, module, module + ".swift")
            guard let bytes = try? FileSystem.readFile(path, limit: 1 << 20) else {
                throw ExtensionBuildError(.unavailable, "the SDK's \(path) is missing")
            }
            material += Digest.sha256(bytes)
        }
        let stamped =
            sdk.moduleFiles + [
                sdk.library, Path.join(sdk.modulesDirectory, "NSEOSLog.swiftmodule"),
                Path.join(sdk.modulesDirectory, "NSESecurity.swiftmodule"),
            ]
        for path in stamped {
            material += Array("\(path) \(FileSystem.stamp(path).map { "\($0)" } ?? "")\n".utf8)
        }
        material += Array(compiler.utf8)
        return Hex.encode(Digest.sha256(material))
    }
}
