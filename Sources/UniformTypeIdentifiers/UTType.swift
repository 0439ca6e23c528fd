/// A type of data, named by a reverse-DNS identifier (`public.jpeg`), with the types it conforms to and the tags
/// (filename extensions, MIME types) that name it elsewhere.
///
/// A type is one of three kinds, as on Apple's platforms:
/// - declared by the system (`UTType.jpeg`, `UTType("public.png")`): the types of `CoreTypes`;
/// - dynamic (`dyn.a…`): made for a tag no declared type has, conforming to the supertype asked for, its tag and
///   supertype encoded in the identifier (see `DynamicType`);
/// - an app's own type, made with `init(exportedAs:conformingTo:)` or `init(importedAs:conformingTo:)`. iOS would read
///   its declaration from the app's Info.plist; here there is none to read, so the type conforms to the `parentType`
///   given (and its supertypes) and has no tags. `UTType(_:)` does not know it, as on iOS without a declaration.
///
/// Types are equal when their identifiers are, ignoring ASCII case.
public struct UTType: Sendable {
    /// The type's identifier: `public.jpeg`, `com.compuserve.gif`, `dyn.ah62d4rv4ge81g6pq`.
    public let identifier: String

    /// For an app's own type: the supertypes it was given, with theirs. Empty for declared and dynamic types, whose
    /// supertypes come from `CoreTypes` and from the identifier.
    private let givenSupertypes: [String]

    private init(resolved identifier: String, givenSupertypes: [String] = []) {
        self.identifier = identifier
        self.givenSupertypes = givenSupertypes
    }

    /// The type with `identifier`, spelled as the system declares it, or `nil` if the system does not know it
    /// (neither declared nor a dynamic identifier).
    public init?(_ identifier: String) {
        if let declaration = CoreTypes.declaration(identifier) {
            self.init(resolved: declaration.identifier)
        } else if DynamicType(identifier: identifier) != nil {
            self.init(resolved: identifier)
        } else {
            return nil
        }
    }

    /// The type for a filename extension (any case), conforming to `supertype`: the declared type with that extension,
    /// the most specific one if several have it (`zip` is `public.zip-archive`), or else a dynamic type. `nil` for an
    /// empty extension, or one holding `:` or `=`.
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) {
        self.init(tag: filenameExtension, tagClass: .filenameExtension, conformingTo: supertype)
    }

    /// The type for a MIME type (any case), conforming to `supertype`, found as `init(filenameExtension:conformingTo:)`
    /// finds one.
    public init?(mimeType: String, conformingTo supertype: UTType = .data) {
        self.init(tag: mimeType, tagClass: .mimeType, conformingTo: supertype)
    }

    /// The preferred type for `tag` in `tagClass` that conforms to `supertype` (any type when `nil`).
    public init?(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) {
        guard let type = Self.types(tag: tag, tagClass: tagClass, conformingTo: supertype).first else { return nil }
        self = type
    }

    /// Every type for `tag` in `tagClass` that conforms to `supertype`, the preferred one first: the declared types,
    /// or else the one dynamic type. Empty when the tag is not valid (empty, or holding `:` or `=`).
    public static func types(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) -> [UTType] {
        let declared = CoreTypes.declarations(tag: tag, tagClass: tagClass)
            .map { UTType(resolved: $0.identifier) }
            .filter { supertype.map($0.conforms(to:)) ?? true }
        if !declared.isEmpty {
            // The most specific first: a type none of the others is a subtype of. Table order breaks ties.
            let specific = declared.filter { type in !declared.contains { $0.isSubtype(of: type) } }
            return specific + declared.filter { !specific.contains($0) }
        }
        guard
            let dynamic = DynamicType(tag: tag, tagClass: tagClass.rawValue, conformsTo: supertype?.identifier)
        else { return [] }
        return [UTType(resolved: dynamic.identifier)]
    }

    /// A type your app declares (exports), conforming to `parentType`. See the type's discussion for what stands in for
    /// the declaration iOS reads from Info.plist. A system-declared identifier gives the system's type.
    public init(exportedAs identifier: String, conformingTo parentType: UTType? = nil) {
        self.init(appType: identifier, conformingTo: parentType)
    }

    /// A type your app uses but another declares (imports), conforming to `parentType`; as
    /// `init(exportedAs:conformingTo:)`.
    public init(importedAs identifier: String, conformingTo parentType: UTType? = nil) {
        self.init(appType: identifier, conformingTo: parentType)
    }

    private init(appType identifier: String, conformingTo parentType: UTType?) {
        if let known = UTType(identifier) {
            self = known
        } else {
            let supertypes = parentType.map { [$0.identifier] + $0.supertypeIdentifiers } ?? []
            self.init(resolved: identifier, givenSupertypes: supertypes)
        }
    }

    // MARK: - What the type is

    private var declaration: TypeDeclaration? { CoreTypes.declaration(identifier) }

    private var dynamicType: DynamicType? { DynamicType(identifier: identifier) }

    /// The preferred filename extension (`jpeg` for `UTType.jpeg`), or `nil` if the type has none.
    public var preferredFilenameExtension: String? { tags[.filenameExtension]?.first }

    /// The preferred MIME type (`image/jpeg` for `UTType.jpeg`), or `nil` if the type has none.
    public var preferredMIMEType: String? { tags[.mimeType]?.first }

    /// The type's tags by class, preferred first. A dynamic type has the one tag it was made for.
    public var tags: [UTTagClass: [String]] {
        if let declaration {
            var tags: [UTTagClass: [String]] = [:]
            if !declaration.filenameExtensions.isEmpty { tags[.filenameExtension] = declaration.filenameExtensions }
            if !declaration.mimeTypes.isEmpty { tags[.mimeType] = declaration.mimeTypes }
            return tags
        }
        if let dynamicType { return [UTTagClass(rawValue: dynamicType.tagClass): [dynamicType.tag]] }
        return [:]
    }

    /// A description for people (`JPEG image`), in English; `nil` for dynamic types and an app's own types, which have
    /// no declaration to take one from.
    public var localizedDescription: String? { declaration?.description }

    /// Whether the system declares the type.
    public var isDeclared: Bool { declaration != nil }

    /// Whether the type is dynamic (`dyn.…`): made for a tag no declared type has.
    public var isDynamic: Bool { dynamicType != nil }

    /// Whether the type is in the public domain: its identifier starts with `public.`.
    public var isPublic: Bool { CoreTypes.lowercased(identifier).hasPrefix("public.") }

    // MARK: - Conformance

    /// The identifiers of every type this one conforms to, directly or not, nearest first; not this type's own.
    var supertypeIdentifiers: [String] {
        let direct: [String]
        if let declaration {
            direct = declaration.conformsTo
        } else if let conformsTo = dynamicType?.conformsTo {
            direct = [conformsTo]
        } else {
            direct = givenSupertypes
        }
        return CoreTypes.closure(of: direct)
    }

    /// The types this one conforms to, directly or not.
    public var supertypes: Set<UTType> {
        Set(supertypeIdentifiers.map { UTType($0) ?? UTType(resolved: $0) })
    }

    /// Whether the type is `type` or conforms to it, directly or not: `UTType.jpeg.conforms(to: .image)`.
    public func conforms(to type: UTType) -> Bool {
        self == type || isSubtype(of: type)
    }

    /// Whether `type` conforms to this type, directly or not; `false` when they are equal.
    public func isSupertype(of type: UTType) -> Bool {
        type.isSubtype(of: self)
    }

    /// Whether this type conforms to `type`, directly or not; `false` when they are equal.
    public func isSubtype(of type: UTType) -> Bool {
        let key = CoreTypes.lowercased(type.identifier)
        return self != type && supertypeIdentifiers.contains { CoreTypes.lowercased($0) == key }
    }
}

extension UTType: Hashable {
    public static func == (lhs: UTType, rhs: UTType) -> Bool {
        CoreTypes.lowercased(lhs.identifier) == CoreTypes.lowercased(rhs.identifier)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(CoreTypes.lowercased(identifier))
    }
}

extension UTType: CustomStringConvertible, CustomDebugStringConvertible {
    /// The identifier.
    public var description: String { identifier }

    /// The identifier and, for a declared type, its description: `public.jpeg (JPEG image)`.
    public var debugDescription: String {
        localizedDescription.map { "\(identifier) (\($0))" } ?? identifier
    }
}

/// Encoded as its identifier. Decoding an identifier the system does not know gives an imported type with that
/// identifier and no supertypes, rather than failing: the identifier is what was archived.
extension UTType: Codable {
    public init(from decoder: any Decoder) throws {
        let identifier = try decoder.singleValueContainer().decode(String.self)
        self = UTType(identifier) ?? UTType(importedAs: identifier)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}
