import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Watches the answers of an HTTP/1.1 connection or HTTP/2 stream: for each 200 (or `/v1/notify`'s 202, a push
/// held for an offline device) that carries `apns-unique-id`,
/// tells ``Acknowledgements`` when it starts being written and whether its last part reached the connection. A
/// write that fails, or a channel that goes away in the middle of the answer, counts as not written.
final class AnswerObserver: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let uniqueIDField = HTTPField.Name("apns-unique-id")!

    private let acknowledgements: Acknowledgements
    /// The unique id of the 200 (or 202) being written.
    private var current: String?

    init(acknowledgements: Acknowledgements) {
        self.acknowledgements = acknowledgements
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .head(let response) = part {
            current =
                response.status == .ok || response.status == .accepted
                ? response.headerFields[Self.uniqueIDField] : nil
            if let current { acknowledgements.writing(current) }
        }
        guard let uniqueID = current else { return context.write(data, promise: promise) }
        // A constant, so the completion (which may run on another thread) captures a value, not a variable.
        let isEnd: Bool
        if case .end = part {
            isEnd = true
            current = nil
        } else {
            isEnd = false
        }
        let written = promise ?? context.eventLoop.makePromise()
        let acknowledgements = self.acknowledgements
        written.futureResult.whenComplete { result in
            switch result {
            case .failure: acknowledgements.answered(uniqueID, written: false)
            case .success: if isEnd { acknowledgements.answered(uniqueID, written: true) }
            }
        }
        context.write(data, promise: written)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let current { acknowledgements.answered(current, written: false) }
        current = nil
    }
}
