import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One end of a line-framed conversation over two descriptors: lines are read from `input` and written to `output`.
///
/// The one framing of the host/extension protocol: the extension reads its host through it (blocking, with a
/// timeout), the host and the app launcher read their child through it (from their own poll loop, with
/// ``fill()`` when the descriptor is readable). It does not own `input`; it closes `output` in ``closeOutput()``.
/// Used by one thread at a time.
public final class LineChannel: @unchecked Sendable {
    /// What reading gave.
    public enum Received: Sendable, Equatable {
        /// A complete line, without its newline.
        case line([UInt8])
        /// Nothing arrived within the timeout.
        case timedOut
        /// The other side closed the stream; `unterminated` is what followed the last newline.
        case closed(unterminated: [UInt8])
    }

    /// What one read of the input gave.
    public enum Fill: Sendable, Equatable {
        /// Bytes arrived (lines may now be waiting).
        case read
        /// Nothing to read now (non-blocking input), or the read was interrupted.
        case nothing
        /// End of file (or a read error): nothing more will come.
        case closed
    }

    public let input: Int32
    /// The descriptor lines are written to; -1 once closed.
    public private(set) var output: Int32
    private var framer: LineFramer
    /// Whether the input reached end of file.
    public private(set) var inputClosed = false
    private var chunk = [UInt8](repeating: 0, count: 16 * 1024)

    public init(input: Int32, output: Int32, maxLineBytes: Int) {
        self.input = input
        self.output = output
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
    }

    /// Reads once from the input into the buffer.
    public func fill() -> Fill {
        guard !inputClosed else { return .closed }
        let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return .nothing }
        if count <= 0 {
            inputClosed = true
            return .closed
        }
        framer.append(chunk[0..<count])
        return .read
    }

    /// The next complete line already read, `nil` if none is waiting.
    public func bufferedLine() throws(LineFramer.LineTooLong) -> [UInt8]? {
        try framer.nextLine()
    }

    /// What followed the last newline (the unterminated rest once the input is closed).
    public var unterminated: [UInt8] { framer.unterminated }

    /// Whether nothing more can be received: the input is closed and every complete line was taken.
    public var isExhausted: Bool { inputClosed && !framer.hasLine }

    /// The next line, waiting at most `timeoutMilliseconds` for each read (-1 waits as long as it takes).
    public func receive(timeoutMilliseconds: Int32 = -1) throws(LineFramer.LineTooLong) -> Received {
        while true {
            if let line = try framer.nextLine() { return .line(line) }
            if inputClosed { return .closed(unterminated: framer.unterminated) }
            var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return .timedOut }
            _ = fill()
        }
    }

    /// Writes `bytes` (a line with its newline) in full; `false` when the other side no longer reads.
    @discardableResult
    ///
    /// SIGPIPE is blocked on this thread while it writes: a reader gone is `false`, never a signal that ends this
    /// process, whatever the process does with SIGPIPE (a library cannot count on its embedder ignoring it, and the
    /// host writes `content-accepted` to an extension that may have exited already).
    public func send(_ bytes: [UInt8]) -> Bool {
        guard output >= 0 else { return false }
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        let failed = FileSystem.writeFully(fd: output, bytes) != nil
        if failed {
            // The write raised SIGPIPE for this thread: take it before unblocking, so it is never delivered.
            var pending = sigset_t()
            var now = timespec()
            if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 { sigtimedwait(&pipeSignal, nil, &now) }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return !failed
    }

    /// Closes the output: the other side reads end of file.
    public func closeOutput() {
        guard output >= 0 else { return }
        close(output)
        output = -1
    }
}

extension LineChannel {
    /// The next message of type `M`, skipping blank lines; `nil` on timeout or once the input is closed.
    public func receive<M: ProtocolMessage>(_ type: M.Type, timeoutMilliseconds: Int32 = -1) throws(ProtocolError) -> M?
    {
        while true {
            let received: Received
            do { received = try receive(timeoutMilliseconds: timeoutMilliseconds) } catch { throw M.lineTooLong }
            switch received {
            case .line(let line):
                if let message = try M.decode(line: line) { return message }
            case .timedOut, .closed:
                return nil
            }
        }
    }

    /// Sends one message as one line; `false` when the other side no longer reads.
    @discardableResult
    public func send(_ message: some ProtocolMessage) -> Bool {
        send(message.line)
    }
}
