import NSEProtocol

/// What the driver sees, in the extension session's terms: lines become protocol messages, the deadline the timer
/// that is due; what the session decides becomes writes, closes and kills.
extension ExtensionSession: ProcessSession {
    var samplesMemory: Bool { true }

    mutating func observe(_ observation: ProcessObservation) -> [ProcessAction] {
        switch observation {
        case .launched(let at):
            return perform(handle(.launched(at: at)))
        case .launchFailed(let message):
            return perform(handle(.launchFailed(message)))
        case .line(let line, let at):
            let message: ExtensionMessage?
            do { message = try ExtensionMessage.decode(line: line) } catch {
                return perform(handle(.protocolViolation(error.description)))
            }
            switch message {
            case .content(let content):
                return perform(handle(.contentProposed(content, at: at)))
            case .reportVoIP(let payload):
                return perform(handle(.voipReportAsked(payload)))
            case nil:
                return []
            }
        case .lineTooLong:
            return perform(handle(.protocolViolation(ExtensionMessage.lineTooLong.description)))
        case .stdoutClosed:
            // A last line without its newline is not a message (docs/protocol.md: every line ends with one).
            return []
        case .pipesClosed:
            return perform(handle(.pipesClosed))
        case .memory(let peak):
            return perform(handle(.memorySampled(peakKilobytes: peak)))
        case .deadline(let now):
            return timerEvent(now: now).map { perform(handle($0)) } ?? []
        case .exited:
            return perform(handle(.exited))
        }
    }

    private func perform(_ actions: [Action]) -> [ProcessAction] {
        actions.map { action in
            switch action {
            case .send(let message): .write(message.line)
            case .closeStdin: .closeStdin
            case .kill: .kill
            case .finish: .finish
            }
        }
    }
}
