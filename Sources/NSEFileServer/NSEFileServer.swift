// NSEFileServer: `nse files`, the file-transfer server a secure messenger's attachments go through (encrypted photos
// and voice notes): as Flexisip's, an HTTP server of its own beside the SIP proxy. An upload is on disk (synced,
// renamed into place) before its 201; a download streams from disk with ranges; faults come on cue (docs/files.md).
//
// Files and folders:
//   FileServer               the listener (Hummingbird; HTTPS with h2 and http/1.1 by ALPN), its stop within a grace
//   FileServerConfiguration  options; FileServerError: why it could not start
//   FilesResponder           the router, the request log's entry per answer; FilesRequestContext
//   Routes/                  FilesController (`POST /files`, `GET`/`HEAD /files/{id}`), ControlController
//                            (`/control/faults`, `/control/requests`), Answers (JSON answers and errors)
//   Storage/                 BlobStore (the folder: `<id>/blob`, `<id>/meta.json`), PendingUpload (written, hashed,
//                            committed), StoredBlob (an open file), BlobID (128 random bits, hex)
//   Upload/                  UploadForm (raw or multipart), MultipartReader (a form read chunk by chunk),
//                            HeaderParameters (`type; name="value"`)
//   Download/                RangeRequest (what `Range` asks), DownloadBody (the streamed body and its faults)
//   Faults/                  FileFault (one rule: JSON and `--fault`), FileFaultPlan (the rules, taken per download)
//   Log/                     RequestLog (`GET /control/requests`), LoggedRequest (one entry while it is answered)
//   Connections/             OpenConnections and TrackedChildChannel (every connection, closed at the end of the
//                            grace), ContinueHandler (`Expect: 100-continue`), Occurrence (a wait that ends early)
