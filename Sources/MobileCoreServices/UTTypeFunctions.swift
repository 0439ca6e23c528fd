// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Apple's C function names, kept as they are so NSE code calls them unchanged.

internal import UniformTypeIdentifiers

// The UTType functions of UTType.h, deprecated in iOS 15.0 for the UTType API, which answers them here: a tag resolves
// to the same type (declared, else dynamic) and a type conforms to the same types whichever API asks. Identifiers the
// system does not know are types with no supertypes and no tags, as they are to the system.

/// The preferred type identifier for `inTag` of class `inTagClass` (`kUTTagClassFilenameExtension`,
/// `kUTTagClassMIMEType`) conforming to `inConformingToUTI` (to any type when `nil`): a declared type's identifier,
/// else a dynamic (`dyn.…`) one; `nil` only for a tag that cannot name a type (empty, or holding `:` or `=`). Retained:
/// take it with `takeRetainedValue()`.
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeCreatePreferredIdentifierForTag(
    _ inTagClass: CFString, _ inTag: CFString, _ inConformingToUTI: CFString?
) -> Unmanaged<CFString>? {
    let tagClass = UTTagClass(rawValue: inTagClass as String)
    let supertype = inConformingToUTI.map { utType($0 as String) }
    guard let type = UTType(tag: inTag as String, tagClass: tagClass, conformingTo: supertype) else { return nil }
    return retained(type.identifier)
}

/// The preferred tag of class `inTagClass` for the type `inUTI` (`jpeg` and `image/jpeg` for `public.jpeg`), or `nil`
/// if the type has none. Retained: take it with `takeRetainedValue()`.
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeCopyPreferredTagWithClass(_ inUTI: CFString, _ inTagClass: CFString) -> Unmanaged<CFString>? {
    guard let tag = utType(inUTI as String).tags[UTTagClass(rawValue: inTagClass as String)]?.first else { return nil }
    return retained(tag)
}

/// Whether the type `inUTI` is `inConformsToUTI` or conforms to it, directly or not.
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeConformsTo(_ inUTI: CFString, _ inConformsToUTI: CFString) -> Bool {
    utType(inUTI as String).conforms(to: utType(inConformsToUTI as String))
}

/// Whether two type identifiers name the same type (identifiers ignore ASCII case).
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeEqual(_ inUTI1: CFString, _ inUTI2: CFString) -> Bool {
    utType(inUTI1 as String) == utType(inUTI2 as String)
}

/// The description of the type `inUTI` (`JPEG image`), or `nil` if it has none (dynamic and unknown types). Retained:
/// take it with `takeRetainedValue()`.
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeCopyDescription(_ inUTI: CFString) -> Unmanaged<CFString>? {
    utType(inUTI as String).localizedDescription.map(retained)
}

/// Whether the system declares the type `inUTI`.
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeIsDeclared(_ inUTI: CFString) -> Bool {
    utType(inUTI as String).isDeclared
}

/// Whether `inUTI` is a dynamic type identifier (`dyn.…`) that names a tag.
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use the UTType class instead.")
public func UTTypeIsDynamic(_ inUTI: CFString) -> Bool {
    utType(inUTI as String).isDynamic
}

/// The type an identifier names: the system's, or else one the system does not know, with no supertypes or tags.
private func utType(_ identifier: String) -> UTType {
    UTType(identifier) ?? UTType(importedAs: identifier)
}

/// A +1 `CFString`, as the C functions named `Create` and `Copy` return them.
private func retained(_ string: String) -> Unmanaged<CFString> {
    Unmanaged.passRetained(string as NSString)
}
