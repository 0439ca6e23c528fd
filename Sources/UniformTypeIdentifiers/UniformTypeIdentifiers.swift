// Apple's UniformTypeIdentifiers on Linux: `UTType`, `UTTagClass`, the core types an app extension meets, and the
// `URL` helpers that name a file after a type. What a type is made of (its conformances, filename extensions and MIME
// types) comes from one table, `CoreTypes.declarations`; UserNotifications judges attachments with the same table, through
// `UTType(filenameExtension:)` and `conforms(to:)`, so an attachment's type is decided the way the developer's own code
// decides it.
//
// On Apple's platforms `import UniformTypeIdentifiers` brings Foundation with it (the framework's header imports it), so
// NSE code that imports only this module may use `URL` and `Data`: the same here.
@_exported public import Foundation
