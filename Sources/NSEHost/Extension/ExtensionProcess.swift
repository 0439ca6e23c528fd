import NSEProtocol

/// An extension session with a real process behind it, as the driver sees it: lines become protocol messages, the
/// deadline the timer that is due; what the session decides becomes writes, closes and kills.
struct ExtensionProcess: ProcessMachine {
    var session: ExtensionMachine
    /// Keeps what the extension handed over with its content, before the extension is told it was accepted; `true`
    /// once it is kept. Nil: the host's memory is enough (`nse run` and replay print the result, nothing resumes).
    let keepContent: (@Sendable (ExtensionHandover) -> Bool)?
    /// Where its `UNUserNotificationCenter.add(_:)` goes; nil: refused (`notificationsNotAllowed`).
    var notifications: LocalNotificationPoster? = nil

    var deadline: UInt64? { session.deadline }
    var samplesMemory: Bool { true }

    mutating func observe(_ observation: ProcessObservation) -> [ProcessAction] {
        guard let event = event(for: observation) else { return [] }
        return perform(session.handle(event))
    }

    /// The session's event for what the driver saw, if it is one.
    private func event(for observation: ProcessObservation) -> ExtensionMachine.Event? {
        switch observation {
        case .launched(let at):
            return .launched(at: at)
        case .launchFailed(let message):
            return .launchFailed(message)
        case .line(let line, let at):
            let message: ExtensionMessage?
            do { message = try ExtensionMessage.decode(line: line) } catch {
                return .protocolViolation(error.description)
            }
            switch message {
            case .content(let content): return .contentProposed(content, at: at)
            case .reportVoIP(let payload, let framework): return .voipReportAsked(payload, framework: framework)
            case .addNotification(let addition): return .notificationAddAsked(addition)
            case .hello(let hello): return .helloReceived(hello)
            case .ready: return .readyReceived
            case nil: return nil
            }
        case .lineTooLong:
            return .protocolViolation(ExtensionMessage.lineTooLong.description)
        case .stdoutClosed:
            // A last line without its newline is not a message (docs/protocol.md: every line ends with one).
            return nil
        case .pipesClosed:
            return .pipesClosed
        case .memory(let sample):
            return .memorySampled(residentPeak: sample.residentPeak, footprint: sample.footprint)
        case .deadline(let now):
            return session.timerEvent(now: now)
        case .exited:
            return .exited
        case .hostStopping:
            // An extension runs within its budget and grace: a stopping host lets it finish.
            return nil
        }
    }

    private mutating func perform(_ actions: [ExtensionMachine.Action]) -> [ProcessAction] {
        var performed: [ProcessAction] = []
        for action in actions {
            switch action {
            case .send(let message): performed.append(.write(message.line))
            case .accept(let handover):
                // A content the host could not keep is not acknowledged: the extension keeps its messages, and a
                // later push shows them again rather than never.
                if keepContent?(handover) ?? true {
                    performed.append(.write(HostMessage.contentAccepted.line))
                } else {
                    performed += perform(session.handle(.handoverRefused))
                }
            case .addNotification(let addition):
                let outcome = notifications?.add(addition) ?? .failure(.notificationsNotAllowed)
                performed += perform(session.handle(.notificationAddAnswered(outcome)))
            case .closeStdin: performed.append(.closeStdin)
            case .kill: performed.append(.kill)
            case .finish: performed.append(.finish)
            case .release: performed.append(.release)
            }
        }
        return performed
    }
}
