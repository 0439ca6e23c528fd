import ArgumentParser
import NSECommandLine
import NSEExtensionBuild
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// `nse extension`: a user's own Notification Service Extension, written against Apple's APIs (docs/sdk.md).
struct ExtensionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extension", abstract: "Build your own Notification Service Extension against nse's SDK.",
        subcommands: [Build.self])

    struct Build: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build an extension from its Swift files, unchanged; print the executable's path last.",
            discussion:
                "Exit status: 0 built (or found in the cache), 64 a bad option value (or NSE_CACHE_EXTENSIONS), 65 the sources cannot make an extension (the compiler's messages are printed as it printed them), 66 a path does not exist, 69 no SDK or no swiftc, 74 I/O error. The cache keeps the NSE_CACHE_EXTENSIONS (default 64) most recently used builds."
        )

        @Argument(
            help: ArgumentHelp(
                "The extension target's Swift files, or folders searched for them (with its Info.plist, .entitlements and .lproj strings).",
                valueName: "path"))
        var paths: [String]

        @Option(
            help: ArgumentHelp(
                "The principal class (default: the Info.plist's NSExtensionPrincipalClass).", valueName: "name"))
        var principalClass: String?

        @Option(help: ArgumentHelp("The extension's Info.plist (default: the one among the paths).", valueName: "file"))
        var infoPlist: String?

        @Option(
            help: ArgumentHelp(
                "The app's entitlements, checked here and applied to a device with nse device set --entitlements.",
                valueName: "file"))
        var entitlements: String?

        @Option(help: ArgumentHelp("Copy the executable here.", valueName: "file"))
        var output: String?

        @Option(help: "debug (default) or release.")
        var configuration: String = "debug"

        @Option(help: "The Swift language mode: 5 (Xcode's default for an extension target) or 6.")
        var swiftVersion: String = "5"

        @Option(
            help: ArgumentHelp(
                "Xcode's PRODUCT_BUNDLE_IDENTIFIER: Bundle.main.bundleIdentifier (default: \(ExtensionBuilder.defaultBundleIdentifier)).",
                valueName: "id"))
        var bundleIdentifier: String?

        func validate() throws {
            guard ExtensionBuilder.Configuration(rawValue: configuration) != nil else {
                throw ValidationError("--configuration must be debug or release")
            }
            guard ["5", "6"].contains(swiftVersion) else { throw ValidationError("--swift-version must be 5 or 6") }
            if let bundleIdentifier, let problem = ExtensionBuilder.bundleIdentifierProblem(bundleIdentifier) {
                throw ValidationError("--bundle-identifier: \(problem)")
            }
            if let principalClass,
                principalClass.isEmpty || !principalClass.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            {
                throw ValidationError("--principal-class must be a Swift class name")
            }
        }

        func run() async throws {
            var builder = ExtensionBuilder(paths: paths)
            builder.principalClass = principalClass
            builder.infoPlist = infoPlist
            builder.entitlements = entitlements
            builder.configuration = ExtensionBuilder.Configuration(rawValue: configuration) ?? .debug
            builder.swiftVersion = swiftVersion
            builder.bundleIdentifier = bundleIdentifier
            let product: ExtensionBuilder.Product
            do { product = try await builder.build() } catch {
                let status: ExitStatus =
                    switch error.code {
                    case .sources: .rejected
                    case .missing: .noInput
                    case .unavailable: .unavailable
                    case .io: .ioError
                    case .usage: .usage
                    }
                throw Failure(status, "extension build: \(error.description)").exit()
            }
            var path = product.executable
            if let output {
                do throws(SystemError) {
                    guard let bytes = try FileSystem.readFile(product.executable, limit: 1 << 30) else {
                        throw SystemError(errnoCode: EFBIG, operation: "read", path: product.executable)
                    }
                    try FileSystem.writeAtomically(output, bytes, mode: 0o755)
                } catch {
                    throw Failure(.ioError, "extension build: --output \(error.description)").exit()
                }
                path = FileSystem.absolute(output)
            }
            StandardStreams.writeError(
                "nse: extension build: \(product.principalClass), \(product.cached ? "unchanged (cached)" : "built")\n")
            StandardStreams.writeOut(path + "\n")
        }
    }
}
