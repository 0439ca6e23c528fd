import Hummingbird
import NIOCore

/// The request context of `nse files`: Hummingbird's, the channel the request came on (an HTTP/1.1 connection or an
/// HTTP/2 stream: what a `truncate` fault closes and a delay watches), and the request's log entry.
struct FilesRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// Set by ``FilesResponder`` for every request but the control API's.
    var logged: LoggedRequest?
    /// "1.1" or "2", set by ``FilesResponder``.
    var httpVersion = "1.1"

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
