// Intents, as far as communication notifications need it (iOS 15): the people (`INPerson`, `INPersonHandle`,
// `INImage`), the message intent (`INSendMessageIntent`, its donation metadata and images by parameter) and the
// interaction an extension donates before `updating(from:)`. Donations stay in the process: nse has no Siri or
// share sheet to give them to (docs/sdk.md).
@_exported public import Foundation
@_exported public import UserNotifications
