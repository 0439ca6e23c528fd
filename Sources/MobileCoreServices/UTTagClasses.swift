// The tag classes, as `CFString`. Global `let`s of `NSString`, a class the compiler does not know to be `Sendable`:
// `nonisolated(unsafe)` because each is an immutable string made once from a literal and never mutated.

/// The tag class of filename extensions (`public.filename-extension`).
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTagClassFilenameExtension instead.")
nonisolated(unsafe) public let kUTTagClassFilenameExtension: CFString = "public.filename-extension"

/// The tag class of MIME types (`public.mime-type`).
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTagClassMIMEType instead.")
nonisolated(unsafe) public let kUTTagClassMIMEType: CFString = "public.mime-type"
