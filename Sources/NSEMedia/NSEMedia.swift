// NSEMedia: an extension's attachments, fetched as a secure messenger's NSE fetches them (docs/envelope.md,
// "Attachments"; docs/media.md).
//
//   MediaURL             the http/https URL a message names, split for a request
//   MediaDownload        one HTTP/1.1 GET on the process's event loop (NIOHTTP1, NIOSSL for https), its body handed
//                        on as it arrives, cancellable; never the whole file in memory
//   AttachmentFetch      download → SHA-256 of the encrypted bytes → secretstream decryption → a file, one chunk
//                        held at a time; what the extension hands the host as a UNNotificationAttachment
//   AttachmentFailure    why an attachment is not shown (a reason code, never the file's bytes or name)
//
// Not libcurl, which the rest of nse uses for HTTP: the extension is one static executable (docs/performance.md),
// and Debian ships no static libnghttp2 or libgssapi for libcurl to be linked into it; and not AsyncHTTPClient,
// whose client brings an event-loop group of its own where the extension keeps one thread for all its networking.
