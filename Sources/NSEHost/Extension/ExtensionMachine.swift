public import NSEDevice
public import NSEJSON
public import NSEPayload
public import NSEProtocol

/// One extension process's life as iOS rules it, as a state machine: events in, actions out, no I/O and no clock
/// (times are monotonic nanoseconds carried by the events). ``ExtensionProcess`` drives it with a real process, through
/// ``ProcessDriver``.
public struct ExtensionMachine: Sendable {
    /// Where the extension is.
    public enum Phase: Sendable, Equatable {
        /// Not started yet.
        case launching
        /// A fresh process on a device older than iOS 12: it must answer (any line) by `answerBy` or it is killed, as
        /// iOS 11 killed an extension that took more than 1 s to start. The expiry notice is due at `expiryAt`.
        case starting(expiryAt: UInt64, answerBy: UInt64)
        /// Working on the request; the expiry notice is due at `expiryAt`.
        case running(expiryAt: UInt64)
        /// The expiry notice was sent; the process is killed at `killAt` unless its best attempt comes first.
        case expiring(killAt: UInt64)
        /// Its content is in; it must exit (its stdin closed) or say `ready` (a warm process kept for the next push)
        /// by `endAt`, or it is ended.
        case delivered(endAt: UInt64)
        /// Over: it exited, was killed or never started (``Record/termination`` says which).
        case finished
    }

    public enum Event: Sendable, Equatable {
        /// The process started, or a warm one was handed this request (the budget counts from here): send it the
        /// request.
        case launched(at: UInt64)
        /// The process could not be started.
        case launchFailed(String)
        /// `contentHandler(content)`, at time `at`.
        case contentProposed(DeliveredContent, at: UInt64)
        /// `reportNewIncomingVoIPPushPayload(payload)`.
        case voipReportAsked(JSONObject, framework: VoIPFramework = .callKit)
        /// `UNUserNotificationCenter.add(_:)`: a local notification to show or schedule.
        case notificationAddAsked(NotificationAddition)
        /// The system added it (what the result lists of it) or refused it.
        case notificationAddAnswered(Result<LocalNotification, NotificationAdditionError>)
        /// `hello` (version 2): what the process says of itself.
        case helloReceived(ExtensionHello)
        /// `ready` (version 2): the instance is gone, the process waits for the next request.
        case readyReceived
        /// The host could not keep the content it was handed (no `content-accepted` was sent): the process is not
        /// kept either.
        case handoverRefused
        /// A line that breaks the protocol: too long, not JSON, an unknown message.
        case protocolViolation(String)
        /// The process's peak resident set so far and its footprint now (nil where the kernel cannot tell), in
        /// kilobytes: the limit applies to the footprint, as iOS's (``MemorySample``).
        case memorySampled(residentPeak: Int, footprint: Int?)
        /// The budget ran out at `at`.
        case expiryNoticeDue(at: UInt64)
        /// The grace after the expiry notice is over.
        case graceOver
        /// The delivered extension did not exit in time.
        case lingerOver
        /// A process on a device older than iOS 12 did not answer within its start time.
        case startTimeOver
        /// Its stdout and stderr are closed: it is leaving.
        case pipesClosed
        /// The process exited.
        case exited
    }

    /// Why the host kills the process.
    public enum KillReason: Sendable, Equatable {
        case budget
        case memory(footprintKilobytes: Int)
        case protocolViolation(String)
        /// Delivered, but still running after the linger time (a process not kept warm): ended.
        case lingered
        /// Silent for longer than an iOS 11 extension was allowed to take to start.
        case slowStart
    }

    public enum Action: Sendable, Equatable {
        /// Write this message as a line on its stdin (the request, the expiry notice, a VoIP report's answer).
        case send(HostMessage)
        /// Add the local notification to the device's Notification Center (``LocalNotificationPoster``), then tell
        /// the session with `notificationAddAnswered`.
        case addNotification(NotificationAddition)
        /// Keep what it handed over (on disk, for a host that records results) and, once it is kept, tell the
        /// extension with `content-accepted`: only then may it let go of what it took from its App Group store.
        case accept(ExtensionHandover)
        /// Close its stdin: the content is in, it should exit.
        case closeStdin
        /// SIGKILL its process group.
        case kill(KillReason)
        /// Stop: reap it and judge.
        case finish
        /// Stop, and leave the process running: it is warm, idle, and takes the next push's request.
        case release
    }

    /// What happened, for the verdict.
    public struct Record: Sendable, Equatable {
        public enum Termination: Sendable, Equatable {
            /// Exited (or was ended after delivering) on its own terms.
            case exited
            /// Killed because it overran the budget and the grace after the expiry notice.
            case budget
            /// Killed by the memory limit.
            case memory(footprintKilobytes: Int)
            /// Could not be started.
            case spawnFailed(String)
            /// Sent a line that breaks the protocol.
            case protocolViolation(String)
            /// Killed for not answering within the start time of a device older than iOS 12.
            case slowStart
        }

        public var termination: Termination = .exited
        /// The first content it proposed.
        public var delivered: DeliveredContent?
        public var deliveredAfterExpiry = false
        public var expirySent = false
        /// Highest peak resident set sampled, in kilobytes.
        public var peakKilobytes: Int?
        /// Highest footprint sampled (private dirty and swapped memory), in kilobytes: what the limit judges.
        public var peakFootprintKilobytes: Int?
        /// Whether it called `reportNewIncomingVoIPPushPayload`, and what the host answered last.
        public var voipReported = false
        public var voipError: VoIPReportFailure?
        /// The framework it reported through (the last report's).
        public var voipFramework = VoIPFramework.callKit
        /// The local notifications it added (`UNUserNotificationCenter.add(_:)`), in order.
        public var localNotifications: [LocalNotification] = []
        /// The payload of the report the host accepted.
        public var acceptedVoIPPayload: JSONObject?
        /// What the process said of itself (`hello`), in this session or when it started.
        public var hello: ExtensionHello?
        /// Whether the process was left running for the next push (it said `ready`).
        public var released = false
    }

    /// How the host treats the process behind the session.
    public struct ProcessTerms: Sendable, Equatable {
        /// Keep the process for the next push when it can serve several requests (`--extension-process warm`).
        public var keep: Bool
        /// What the process said when it started, if it is a warm process that already served a request.
        public var hello: ExtensionHello?
        /// The time a fresh process has to answer (a device older than iOS 12: 1 s), nanoseconds; nil: no limit.
        public var startTime: UInt64?

        public init(keep: Bool = false, hello: ExtensionHello? = nil, startTime: UInt64? = nil) {
            self.keep = keep
            self.hello = hello
            self.startTime = startTime
        }

        /// A fresh process, ended after one request.
        public static let fresh = ProcessTerms()
    }

    public let request: ServiceRequest
    public let limits: ExtensionLimits
    /// Whether the app has the notification-filtering entitlement (required to report a VoIP push from an NSE).
    public let filteringEntitlement: Bool
    /// The iOS release the device runs: which frameworks' `reportNewIncomingVoIPPushPayload` exist.
    public let release: IOSVersion
    public let terms: ProcessTerms
    public private(set) var phase: Phase = .launching
    public private(set) var record = Record()
    /// Whether its stdout or stderr is still open (memory is judged only until it is leaving).
    private var pipesOpen = true
    /// Whether the process stays for the next push once this request is done: the host wants it, the process said it
    /// can, and the content was kept.
    private var keepsProcess: Bool { terms.keep && record.hello?.servesMany == true && !handoverRefused }
    private var handoverRefused = false
    /// `add-notification`s this session took.
    private var additions = 0

    public init(
        request: ServiceRequest, limits: ExtensionLimits, filteringEntitlement: Bool, release: IOSVersion = .current,
        terms: ProcessTerms = .fresh
    ) {
        self.request = request
        self.limits = limits
        self.filteringEntitlement = filteringEntitlement
        self.release = release
        self.terms = terms
        record.hello = terms.hello
    }

    /// When the next timer event is due, if one is.
    public var deadline: UInt64? {
        switch phase {
        case .starting(let expiryAt, let answerBy): min(expiryAt, answerBy)
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
        case .starting(_, let answerBy): return now >= answerBy ? .startTimeOver : .expiryNoticeDue(at: now)
        case .running: return .expiryNoticeDue(at: now)
        case .expiring: return .graceOver
        case .delivered: return .lingerOver
        case .launching, .finished: return nil
        }
    }

    public mutating func handle(_ event: Event) -> [Action] {
        if case .starting(let expiryAt, _) = phase, event.isAnswer {
            // It answered in time: the start rule is met.
            phase = .running(expiryAt: expiryAt)
        }
        switch (phase, event) {
        case (.finished, _):
            return []
        case (.launching, .launched(let at)):
            let expiryAt = at + ExtensionLimits.nanoseconds(limits.budget)
            phase =
                terms.startTime.map { .starting(expiryAt: expiryAt, answerBy: at + $0) } ?? .running(expiryAt: expiryAt)
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
        case (_, .memorySampled(let residentPeak, let footprint)):
            record.peakKilobytes = max(record.peakKilobytes ?? 0, residentPeak)
            // The footprint, as iOS counts it; the resident peak only where the kernel cannot tell it.
            let charged = footprint ?? residentPeak
            if let footprint { record.peakFootprintKilobytes = max(record.peakFootprintKilobytes ?? 0, footprint) }
            // Like jetsam, at once; not once the process is leaving (its pipes closed).
            guard pipesOpen, charged > limits.memoryLimitKilobytes else { return [] }
            return kill(.memory(footprintKilobytes: charged))
        case (.running, .helloReceived(let hello)), (.expiring, .helloReceived(let hello)):
            record.hello = hello
            return []
        case (.running, .contentProposed(let content, let at)), (.expiring, .contentProposed(let content, let at)):
            record.delivered = content
            record.deliveredAfterExpiry = record.expirySent
            phase = .delivered(endAt: at + ExtensionLimits.nanoseconds(ExtensionLimits.linger))
            let accept = Action.accept(ExtensionHandover(content, record: record))
            // A process kept for the next push keeps its stdin open and says `ready` when its instance is gone.
            return keepsProcess ? [accept] : [accept, .closeStdin]
        case (.delivered, .handoverRefused):
            let wasKept = keepsProcess
            handoverRefused = true
            return wasKept ? [.closeStdin] : []
        case (.delivered, .readyReceived) where keepsProcess:
            record.released = true
            phase = .finished
            return [.release]
        case (.running, .voipReportAsked(let payload, let framework)),
            (.expiring, .voipReportAsked(let payload, let framework)):
            let first = IOSVersion.firstReleaseEscalating(through: framework)
            guard release >= first else {
                // The method is not there on this release: the extension dies as on a missing symbol.
                return kill(
                    .protocolViolation(
                        "called \(framework.rawValue)'s reportNewIncomingVoIPPushPayload, which came with iOS \(first); the device runs iOS \(release)"
                    ))
            }
            // As CXProvider's (and ConversationManager's) reportNewIncomingVoIPPushPayload answers an NSE.
            let error: VoIPReportError? =
                record.voipReported
                ? .invalidClientProcess
                : filteringEntitlement ? nil : .missingNotificationFilteringEntitlement
            if error == nil { record.acceptedVoIPPayload = payload }
            record.voipReported = true
            record.voipFramework = framework
            record.voipError = error.map { VoIPReportFailure($0, framework: framework) }
            return [.send(.reportVoIPResult(record.voipError))]
        case (.running, .notificationAddAsked(let addition)), (.expiring, .notificationAddAsked(let addition)):
            return addNotification(addition)
        case (.delivered, .notificationAddAsked(let addition)) where keepsProcess:
            // A warm process's stdin stays open after its content: it still hears the answer. A fresh one's is
            // closed (it is to exit), so what it adds then is not added: it would never learn whether it was.
            return addNotification(addition)
        case (_, .notificationAddAnswered(let outcome)):
            switch outcome {
            case .success(let notification):
                record.localNotifications.append(notification)
                return [.send(.addNotificationResult(nil))]
            case .failure(let error):
                return [.send(.addNotificationResult(error))]
            }
        case (.running, .protocolViolation(let message)), (.expiring, .protocolViolation(let message)):
            return kill(.protocolViolation(message))
        case (.starting, .startTimeOver):
            return kill(.slowStart)
        case (.running, .expiryNoticeDue(let at)), (.starting, .expiryNoticeDue(let at)):
            record.expirySent = true
            phase = .expiring(killAt: at + ExtensionLimits.nanoseconds(limits.grace))
            return [.send(.timeWillExpire)]
        case (.expiring, .graceOver):
            return kill(.budget)
        case (.delivered, .lingerOver):
            return kill(.lingered)
        case (.delivered, _), (.running, _), (.expiring, _), (.starting, _):
            // Whatever comes after the content (more lines, a late report) or out of turn does not count.
            return []
        }
    }

    /// The most local notifications one request may add. iOS sets no such limit; nse does so that its answers, which
    /// an extension may leave unread until it is done, always fit in the extension's stdin pipe (64 KiB): a host that
    /// blocked writing to it could no longer keep the budget.
    public static let maxAdditions = 256

    private mutating func addNotification(_ addition: NotificationAddition) -> [Action] {
        additions += 1
        guard additions <= Self.maxAdditions else {
            return kill(
                .protocolViolation(
                    "the extension added more than \(Self.maxAdditions) local notifications for one push"))
        }
        return [.addNotification(addition)]
    }

    private mutating func kill(_ reason: KillReason) -> [Action] {
        switch reason {
        case .budget: record.termination = .budget
        case .memory(let footprint): record.termination = .memory(footprintKilobytes: footprint)
        case .protocolViolation(let message): record.termination = .protocolViolation(message)
        case .slowStart: record.termination = .slowStart
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

extension ExtensionMachine.Event {
    /// Whether the event is a line from the process (which meets the start rule of a device older than iOS 12).
    fileprivate var isAnswer: Bool {
        switch self {
        case .contentProposed, .voipReportAsked, .notificationAddAsked, .helloReceived, .readyReceived,
            .protocolViolation:
            true
        default: false
        }
    }
}
