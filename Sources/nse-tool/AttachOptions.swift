import ArgumentParser
import NSEPayload

/// `--attach FILE… --files URL [--files-cacert PEM]`, for the commands that seal a message (`nse seal`, `nse send
/// --seal-to`): each file encrypted, uploaded and named in the message (``AttachmentUpload``, docs/media.md).
struct AttachOptions: ParsableArguments {
    @Option(
        parsing: .singleValue,
        help: ArgumentHelp(
            "Encrypt this file (a photo, a voice note), upload it to --files and add it to the sealed message's attachments (docs/media.md); repeatable.",
            valueName: "file"))
    var attach: [String] = []

    @Option(
        help: ArgumentHelp(
            "The file server --attach uploads to (nse files; POST URL/files), e.g. http://127.0.0.1:8080.",
            valueName: "url"))
    var files: String?

    @Option(help: ArgumentHelp("Trust this CA (PEM) for an https --files server.", valueName: "pem"))
    var filesCacert: String?

    func validate() throws {
        if !attach.isEmpty, files == nil { throw ValidationError("--attach needs --files URL (the file server)") }
        if attach.count > Plaintext.Attachment.limit {
            throw ValidationError("a message carries at most \(Plaintext.Attachment.limit) attachments")
        }
    }

    /// The files encrypted and uploaded, in the order given; none without `--attach`.
    func upload() throws(Failure) -> [Plaintext.Attachment] {
        guard let files, !attach.isEmpty else { return [] }
        let upload = AttachmentUpload(server: files, caFile: filesCacert)
        var attachments: [Plaintext.Attachment] = []
        for path in attach { attachments.append(try upload.upload(path)) }
        return attachments
    }
}
