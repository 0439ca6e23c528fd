import NSESystem

/// An app extension's own data container, as iOS gives each extension one apart from its app's and from every other
/// install's: `DIR/Extension/` in the device. Foundation on Linux finds its folders through the environment:
/// `NSHomeDirectory()` and the documents folder through `CFFIXED_USER_HOME` (what Apple's simulator sets too; `HOME`
/// is left alone), the caches through `XDG_CACHE_HOME`, Application Support through `XDG_DATA_HOME`,
/// `NSTemporaryDirectory()` through `TMPDIR`. Given to an extension in an `.appex`
/// bundle only (what `nse extension build` makes): a command of another kind (a script speaking the protocol) keeps
/// the host's home, where its own tools may live.
struct ExtensionSandbox {
    var container: String

    var home: String { Path.join(container, "Extension") }

    /// The variables, the folders made first (as iOS makes them with the container); a folder that cannot be made
    /// is left to fail the extension's own write, as a full disk would.
    func environment() -> [String: String] {
        let folders = [
            "CFFIXED_USER_HOME": home, "XDG_CACHE_HOME": Path.join(home, "Library", "Caches"),
            "XDG_DATA_HOME": Path.join(home, "Library", "Application Support"), "TMPDIR": Path.join(home, "tmp"),
        ]
        for folder in folders.values + [Path.join(home, "Documents")] {
            try? FileSystem.createDirectory(folder, mode: 0o700)
        }
        return folders
    }
}
