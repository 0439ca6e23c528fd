import NSEProtocol

/// An extension session with a real process behind it, as the driver sees it: lines become protocol messages, the
/// deadline the timer that is due; what the session decides becomes writes, closes and kills.
struct ExtensionProcess: ProcessSession {
    var session: ExtensionSession
    /// Keeps the content the extension delivers, before the extension is told it was accepted; `true` once it is
    /// kept. Nil: the host's memory is enough (`nse run` and replay print the result, there is nothing to resume).
    let keepContent: (@Sendable (DeliveredContent) -> Bool)?

    var deadline: UInt64? { session.deadline }
    var samplesMemory: Bool { true }

    mutating func observe(_ observation: ProcessObservation) -> [ProcessAction] {
        switch observation {
        case .launched(let at):
            return perform(session.handle(.launched(at: at)))
        case .launchFailed(let message):
            return perform(session.handle(.launchFailed(message)))
        case .line(let line, let at):
            let message: ExtensionMessage?
            do { message = try ExtensionMessage.decode(line: line) } catch {
                return perform(session.handle(.protocolViolation(error.description)))
            }
            switch message {
            case .content(let content):
                return perform(session.handle(.contentProposed(content, at: at)))
            case .reportVoIP(let payload):
                return perform(session.handle(.voipReportAsked(payload)))
            case nil:
                return []
            }
        case .lineTooLong:
            return perform(session.handle(.protocolViolation(ExtensionMessage.lineTooLong.description)))
        case .stdoutClosed:
            // A last line without its newline is not a message (docs/protocol.md: every line ends with one).
            return []
        case .pipesClosed:
            return perform(session.handle(.pipesClosed))
        case .memory(let peak):
            return perform(session.handle(.memorySampled(peakKilobytes: peak)))
        case .deadline(let now):
            return session.timerEvent(now: now).map { perform(session.handle($0)) } ?? []
        case .exited:
            return perform(session.handle(.exited))
        }
    }

    private func perform(_ actions: [ExtensionSession.Action]) -> [ProcessAction] {
        actions.flatMap { action -> [ProcessAction] in
            switch action {
            case .send(let message): return [.write(message.line)]
            case .accept(let content):
                // A content the host could not keep is not acknowledged: the extension keeps its messages, and a
                // later push shows them again rather than never.
                guard keepContent?(content) ?? true else { return [] }
                return [.write(HostMessage.contentAccepted.line)]
            case .closeStdin: return [.closeStdin]
            case .kill: return [.kill]
            case .finish: return [.finish]
            }
        }
    }
}
