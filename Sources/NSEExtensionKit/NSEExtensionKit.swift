// The runtime under nse's SDK modules (UserNotifications, CallKit, LiveCommunicationKit): the process's one link to
// its host (the host/extension protocol over stdin and stdout, docs/protocol.md), the device the current request is
// for, and the conversions between Foundation's property-list values and nse's JSON. Nothing here is Apple's API:
// a user's code never imports it.
