// Apple's UniformTypeIdentifiers on Linux: `UTType`, `UTTagClass`, the core types an app extension meets, and the
// `URL` helpers that name a file after a type. What a type is made of (its conformances, filename extensions and MIME
// types) comes from one table, `CoreTypes.declarations`, read through the public API only: `UTType(filenameExtension:)`,
// `UTType(mimeType:)`, `UTType(_:)` and `conforms(to:)` answer the developer's code and any other module of nse alike.
//
// On Apple's platforms `import UniformTypeIdentifiers` brings Foundation with it (the framework's header imports it), so
// NSE code that imports only this module may use `URL` and `Data`: the same here.
@_exported public import Foundation
