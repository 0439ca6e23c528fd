// NSEProtocol: the host/extension protocol (docs/protocol.md), written once for both sides: one JSON object per line
// on the extension's stdin and stdout. No Foundation, no NIO: the static extension links it.
//
// Folders:
//   Messages/  HostMessage (request, time-will-expire, report-voip-result, add-notification-result,
//              content-accepted), ExtensionMessage (hello, content, report-voip, add-notification, ready),
//              NotificationAddition, ServiceRequest, DeliveredContent, ProtocolError
//   Framing/   LineFramer (lines of at most 64 KiB) and LineChannel, the one framing the extension, the host and
//              the app launcher use
