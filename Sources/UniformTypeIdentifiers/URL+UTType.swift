extension URL {
    /// The URL with `partialName` appended as a path component named for `contentType`: `partialName` as it is if its
    /// extension already names a type conforming to `contentType` (`photo.jpg` for `.jpeg`), else `partialName` with
    /// the type's preferred extension added (`photo` → `photo.jpeg`); as it is if the type has no extension.
    public func appendingPathComponent(_ partialName: String, conformingTo contentType: UTType) -> URL {
        let named = appendingPathComponent(partialName)
        return Self.extension(of: partialName, fits: contentType)
            ? named : named.appendingPathExtension(for: contentType)
    }

    /// Appends `partialName` as `appendingPathComponent(_:conformingTo:)` does.
    public mutating func appendPathComponent(_ partialName: String, conformingTo contentType: UTType) {
        self = appendingPathComponent(partialName, conformingTo: contentType)
    }

    /// The URL with `contentType`'s preferred filename extension appended (`jpeg` for `.jpeg`); the URL as it is if
    /// the type has no extension.
    public func appendingPathExtension(for contentType: UTType) -> URL {
        guard let pathExtension = contentType.preferredFilenameExtension else { return self }
        return appendingPathExtension(pathExtension)
    }

    /// Appends `contentType`'s preferred filename extension as `appendingPathExtension(for:)` does.
    public mutating func appendPathExtension(for contentType: UTType) {
        self = appendingPathExtension(for: contentType)
    }

    private static func `extension`(of name: String, fits contentType: UTType) -> Bool {
        let pathExtension = (name as NSString).pathExtension
        guard !pathExtension.isEmpty else { return false }
        let key = CoreTypes.lowercased(pathExtension)
        if contentType.tags[.filenameExtension]?.contains(where: { CoreTypes.lowercased($0) == key }) == true {
            return true
        }
        return UTType(filenameExtension: pathExtension).map { $0.isDeclared && $0.conforms(to: contentType) } ?? false
    }
}
