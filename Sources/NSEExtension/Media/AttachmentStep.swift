import Logging
import NSEDevice
import NSEJSON
import NSEMedia
import NSEPayload
import NSEProtocol
import NSESIP
import NSESystem

/// The files a decrypted message names, fetched before its content is handed over, as a messenger's extension
/// attaches a photo or a voice note (docs/media.md): all of them at once on the process's event loop, each
/// decrypted into the request's scratch folder as it arrives. The host's expiry notice cancels what is still
/// downloading and the content goes with what is done: the best attempt. A file that cannot be shown leaves the
/// message shown without it, the reason naming why (never the file's name, type or URL: they were encrypted).
struct AttachmentStep {
    var device: Device
    var request: ServiceRequest
    var logger: Logger

    /// `content` with the attachments that were fetched; blocks the calling thread until every fetch ended, reading
    /// the host meanwhile (the fetches are waited for on a thread of their own).
    func attach(_ attachments: [Plaintext.Attachment], to content: DeliveredContent, host: HostLink)
        -> DeliveredContent
    {
        let folder = Path.join(request.container, "tmp", "extension", request.requestID)
        let caFile = device.config.sip?.caFile
        let fetches = attachments.enumerated().map { index, attachment in
            AttachmentFetch(
                attachment, index: index, into: folder, group: SIPUserAgent.processEventLoopGroup, caFile: caFile)
        }
        host.onExpiry { for fetch in fetches { fetch.cancel() } }
        let outcomes = host.runOnThread {
            fetches.enumerated().map { index, fetch in fetch.wait(expectedSHA256: attachments[index].sha256) }
        }
        host.stopExpiryHandler()
        var delivered = content
        var results: [JSON] = []
        var firstFailure: (index: Int, failure: AttachmentFailure)?
        for (index, outcome) in outcomes.enumerated() {
            switch outcome {
            case .success(let file):
                delivered.attachments.append(
                    DeliveredAttachment(identifier: "attachment-\(index)", path: file.path, type: file.type))
                results.append(["index": .int(Int64(index)), "result": "attached", "size": .int(file.size)])
            case .failure(let failure):
                logger.notice(
                    "attachment not attached",
                    metadata: ["attachment.index": "\(index)", "attachment.reason": "\(failure.code.rawValue)"])
                results.append(["index": .int(Int64(index)), "result": .string(failure.code.rawValue)])
                if firstFailure == nil { firstFailure = (index, failure) }
            }
        }
        var info = delivered.info ?? [:]
        info["attachments"] = .array(results)
        delivered.info = info
        if let (index, failure) = firstFailure {
            delivered.reason = failure.code.reason(
                "the message is shown without attachment \(index + 1) of \(attachments.count): \(failure.detail)")
        }
        return delivered
    }
}
