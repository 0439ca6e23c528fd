public import Foundation

/// An image for a person or a group: bytes, a file on this device, or one of the app's named images.
///
/// `public`, not `open`: nothing subclasses an image (its `Self`-returning factory needs an initializer subclasses
/// could not see).
public class INImage: NSObject, NSCopying {
    enum Source: Equatable {
        case data(Data)
        case file(URL)
        case named(String)
        case system(String)
    }

    let source: Source

    required init(source: Source) {
        self.source = source
        super.init()
    }

    public convenience init(imageData: Data) { self.init(source: .data(imageData)) }

    /// An image in the extension's bundle; nse finds it beside the executable (`NAME`, `NAME.png`, `NAME.jpg`).
    public convenience init(named name: String) { self.init(source: .named(name)) }

    /// A file on this device; nil when there is none (Apple: "a file on the local file system").
    public convenience init?(url URL: URL) {
        guard URL.isFileURL, FileManager.default.isReadableFile(atPath: URL.path) else { return nil }
        self.init(source: .file(URL))
    }

    public convenience init?(url URL: URL, width: Double, height: Double) {
        self.init(url: URL)
    }

    /// iOS 14: an SF Symbol; nse has none of their pictures, so it records the name only.
    public class func systemImageNamed(_ systemImageName: String) -> Self { Self(source: .system(systemImageName)) }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// The image's bytes, when it has any nse can read.
    var bytes: Data? {
        switch source {
        case .data(let data): return data
        case .file(let url): return try? Data(contentsOf: url)
        case .named(let name):
            let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for candidate in [name, name + ".png", name + ".jpg", name + ".jpeg"] {
                if let data = try? Data(contentsOf: folder.appendingPathComponent(candidate)) { return data }
            }
            return nil
        case .system: return nil
        }
    }
}
