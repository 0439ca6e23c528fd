// NSEChat: the chat content formats Linphone puts in a SIP MESSAGE.
//
// Files:
//   CPIM  `message/cpim` (RFC 3862): the wrapper around a chat message and its IMDN headers
//   IMDN  the "delivered" notice (RFC 5438) an extension sends back once it has the message
