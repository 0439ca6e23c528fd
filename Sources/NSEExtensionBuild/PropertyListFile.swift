import FoundationEssentials

/// An Xcode property list read from disk (an Info.plist, an `.entitlements`), XML or binary, decoded as `T`.
enum PropertyListFile {
    /// - Parameter notA: the one-line refusal of a file that is not what is expected, given the decoding error.
    static func decode<T: Decodable>(
        _ type: T.Type, at path: String, notA: (any Error) -> String
    ) throws(ExtensionBuildError) -> T {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ExtensionBuildError(.missing, "\(path): cannot be read")
        }
        do { return try PropertyListDecoder().decode(T.self, from: data) } catch {
            throw ExtensionBuildError(.sources, "\(path): \(notA(error))")
        }
    }
}
