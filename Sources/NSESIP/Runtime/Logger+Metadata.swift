public import Logging

extension Logger {
    /// This logger with `metadata` added (a key it had takes the new value), set on its handler in one change.
    /// swift-log's `StreamLogHandler` renders its whole metadata again at every change: a request's three keys set one
    /// by one were three renderings, on every REGISTER and MESSAGE whether anything is logged or not.
    public func adding(_ metadata: Logger.Metadata) -> Logger {
        var logger = self
        logger.handler.metadata.merge(metadata) { _, new in new }
        return logger
    }
}
