public import NSEJSON
public import NSEPayload
public import NSEProtocol

/// One extension process's life as iOS rules it, as a state machine: events in, actions out, no I/O and no clock
/// (times are monotonic nanoseconds carried by the events). ``ExtensionRun`` drives it with a real process.
public struct ExtensionSession: Sendable {
    /// Where the extension is.
    public enum Phase: Sendable, Equatable {
        /// Not started yet.
        case launching
        /// Working on the request; the expiry notice is due at `expiryAt`.
        case running(expiryAt: UInt64)
        /// The expiry notice was sent; the process is killed at `killAt` unless its best attempt comes first.
        case expiring(killAt: UInt64)
        /// Its content is in and its stdin closed; it must exit by `endAt` or it is ended.
        case delivered(endAt: UInt64)
        /// Over: it exited, was killed or never started (``Record/termination`` says which).
        case finished
    }

    public enum Event: Sendable, Equatable {
        /// The process started (the budget counts from here): send it the request.
        case launched(at: UInt64)
        /// The process could not be started.
        case launchFailed(String)
        /// `contentHandler(content)`, at time `at`.
        case contentProposed(DeliveredContent, at: UInt64)
        /// `reportNewIncomingVoIPPushPayload(payload)`.
        case voipReportAsked(JSONObject)
        /// A line that breaks the protocol: too long, not JSON, an unknown message.
        case protocolViolation(String)
        /// The process's peak resident set so far, in kilobytes.
        case memorySampled(peakKilobytes: Int)
        /// The budget ran out at `at`.
        case expiryNoticeDue(at: UInt64)
        /// The grace after the expiry notice is over.
        case graceOver
        /// The delivered extension did not exit in time.
        case lingerOver
        /// Its stdout and stderr are closed: it is leaving.
        case pipesClosed
        /// The process exited.
        case exited
    }

    /// Why the host kills the process.
    public enum KillReason: Sendable, Equatable {
        case budget
        case memory(peakKilobytes: Int)
        case protocolViolation(String)
        /// Delivered, but still running after the linger time: ended so every notification gets a fresh process.
        case lingered
    }

    public enum Action: Sendable, Equatable {
        /// Write this message as a line on its stdin (the request, the expiry notice, a VoIP report's answer).
        case send(HostMessage)
        /// Keep what it handed over (on disk, for a host that records results) and, once it is kept, tell the
        /// extension with `content-accepted`: only then may it let go of what it took from its App Group store.
        case accept(ExtensionHandover)
        /// Close its stdin: the content is in, it should exit.
        case closeStdin
        /// SIGKILL its process group.
        case kill(KillReason)
        /// Stop: reap it and judge.
        case finish
    }

    /// What happened, for the verdict.
    public struct Record: Sendable, Equatable {
        public enum Termination: Sendable, Equatable {
            /// Exited (or was ended after delivering) on its own terms.
            case exited
            /// Killed because it overran the budget and the grace after the expiry notice.
            case budget
            /// Killed by the memory limit.
            case memory(peakKilobytes: Int)
            /// Could not be started.
            case spawnFailed(String)
            /// Sent a line that breaks the protocol.
            case protocolViolation(String)
        }

        public var termination: Termination = .exited
        /// The first content it proposed.
        public var delivered: DeliveredContent?
        public var deliveredAfterExpiry = false
        public var expirySent = false
        /// Highest peak resident set sampled, in kilobytes.
        public var peakKilobytes: Int?
        /// Whether it called `reportNewIncomingVoIPPushPayload`, and what the host answered last.
        public var voipReported = false
        public var voipError: VoIPReportError?
        /// The payload of the report the host accepted.
        public var acceptedVoIPPayload: JSONObject?
    }

    public let request: ServiceRequest
    public let limits: ExtensionLimits
    /// Whether the app has the notification-filtering entitlement (required to report a VoIP push from an NSE).
    public let filteringEntitlement: Bool
    public private(set) var phase: Phase = .launching
    public private(set) var record = Record()
    /// Whether its stdout or stderr is still open (memory is judged only until it is leaving).
    private var pipesOpen = true

    public init(request: ServiceRequest, limits: ExtensionLimits, filteringEntitlement: Bool) {
        self.request = request
        self.limits = limits
        self.filteringEntitlement = filteringEntitlement
    }

    /// When the next timer event is due, if one is.
    public var deadline: UInt64? {
        switch phase {
        case .running(let expiryAt): expiryAt
        case .expiring(let killAt): killAt
        case .delivered(let endAt): endAt
        case .launching, .finished: nil
        }
    }

    /// The timer event due at `now`, if any.
    public func timerEvent(now: UInt64) -> Event? {
        guard let deadline, now >= deadline else { return nil }
        switch phase {
        case .running: return .expiryNoticeDue(at: now)
        case .expiring: return .graceOver
        case .delivered: return .lingerOver
        case .launching, .finished: return nil
        }
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.finished, _):
            return []
        case (.launching, .launched(let at)):
            phase = .running(expiryAt: at + ExtensionLimits.nanoseconds(limits.budget))
            return [.send(.request(request))]
        case (_, .launchFailed(let message)):
            return end(.spawnFailed(message))
        case (.launching, _):
            return []
        case (_, .exited):
            phase = .finished
            return [.finish]
        case (_, .pipesClosed):
            pipesOpen = false
            return []
        case (_, .memorySampled(let peak)):
            record.peakKilobytes = max(record.peakKilobytes ?? 0, peak)
            // Like jetsam, on the peak; not once the process is leaving (its pipes closed).
            guard pipesOpen, peak > limits.memoryLimitKilobytes else { return [] }
            return kill(.memory(peakKilobytes: peak))
        case (.running, .contentProposed(let content, let at)), (.expiring, .contentProposed(let content, let at)):
            record.delivered = content
            record.deliveredAfterExpiry = record.expirySent
            phase = .delivered(endAt: at + ExtensionLimits.nanoseconds(ExtensionLimits.linger))
            return [.accept(ExtensionHandover(content, record: record)), .closeStdin]
        case (.running, .voipReportAsked(let payload)), (.expiring, .voipReportAsked(let payload)):
            // As CXProvider.reportNewIncomingVoIPPushPayload answers an NSE.
            let error: VoIPReportError? =
                record.voipReported
                ? .invalidClientProcess
                : filteringEntitlement ? nil : .missingNotificationFilteringEntitlement
            if error == nil { record.acceptedVoIPPayload = payload }
            record.voipReported = true
            record.voipError = error
            return [.send(.reportVoIPResult(error))]
        case (.running, .protocolViolation(let message)), (.expiring, .protocolViolation(let message)):
            return kill(.protocolViolation(message))
        case (.running, .expiryNoticeDue(let at)):
            record.expirySent = true
            phase = .expiring(killAt: at + ExtensionLimits.nanoseconds(limits.grace))
            return [.send(.timeWillExpire)]
        case (.expiring, .graceOver):
            return kill(.budget)
        case (.delivered, .lingerOver):
            return kill(.lingered)
        case (.delivered, _), (.running, _), (.expiring, _):
            // Whatever comes after the content (more lines, a late report) or out of turn does not count.
            return []
        }
    }

    private mutating func kill(_ reason: KillReason) -> [Action] {
        switch reason {
        case .budget: record.termination = .budget
        case .memory(let peak): record.termination = .memory(peakKilobytes: peak)
        case .protocolViolation(let message): record.termination = .protocolViolation(message)
        case .lingered: break
        }
        phase = .finished
        return [.kill(reason), .finish]
    }

    private mutating func end(_ termination: Record.Termination) -> [Action] {
        record.termination = termination
        phase = .finished
        return [.finish]
    }
}
