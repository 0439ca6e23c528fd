import NSEDevice

/// The main app's life in the foreground, as a state machine: events in, actions out, no I/O and no clock (times
/// are monotonic nanoseconds carried by the events). ``MainApp`` drives it.
///
/// The app comes to the foreground: it takes the shared core, asking running extensions to stop and waiting for them
/// at most ``SharedCore/takeOverMilliseconds``; registers its SIP account and receives messages itself, refreshing
/// its registration and its heartbeat; and when told to go to the background (SIGTERM, or the end of `--for`) it
/// stops its core and re-REGISTERs with its push parameters before it leaves, so the server pushes again.
struct MainAppMachine: Sendable {
    enum Phase: Sendable, Equatable {
        /// Asking the shared core.
        case starting
        /// Extensions were asked to stop; the core is taken when they have, or at `takeOverAt`.
        case waitingForExtensions(takeOverAt: UInt64)
        /// The core is the app's; the first REGISTER is on its way.
        case registering
        /// Registered: messages come to the app.
        case foreground
        /// The core is stopped; the last REGISTER (with push parameters) is on its way.
        case leaving
        /// Over.
        case done(Exit)
    }

    /// How the app ended.
    enum Exit: Sendable, Equatable {
        /// Went to the background.
        case background
        /// Another app process holds the main core.
        case coreHeld(by: Int32)
        /// The registrar refused or never answered the first REGISTER.
        case registerFailed(String)
    }

    enum Timer: Sendable, Hashable {
        /// Stop waiting for extensions that were asked to stop.
        case takeOver
        /// Refresh the shared core's heartbeat.
        case heartbeat
        /// Refresh the registration.
        case refresh
        /// Stop waiting for the last REGISTER's answer: leave anyway (within SIGTERM's 5 s).
        case leave
    }

    /// How long the last REGISTER may take before the app leaves without its answer.
    static let leaveNanoseconds: UInt64 = 3_000_000_000

    enum Event: Sendable, Equatable {
        /// What the shared core said when the app came to the foreground.
        case foreground(SharedCore.Foreground, at: UInt64)
        /// An extension woke the app: this many are still stopping.
        case extensionsStopping(remaining: Int, at: UInt64)
        case timerFired(Timer, at: UInt64)
        /// The answer to a REGISTER (nil: it failed or went unanswered).
        case registerAnswered(status: Int?, expires: Int?, at: UInt64)
        /// SIGTERM, or the end of `--for`.
        case backgroundAsked(at: UInt64)
    }

    enum Action: Sendable, Equatable {
        /// Wake these extension processes: the main app wants the core.
        case askToStop([Int32])
        /// Take the core (`forced`: some extensions never said they stopped).
        case takeCore(forced: Bool)
        case register
        case arm(Timer, at: UInt64)
        case heartbeat
        /// Stop the core (the shared core no longer names the app).
        case releaseCore
        /// Close the user agent and end with this exit.
        case finish(Exit)
    }

    /// How often the heartbeat is refreshed: a third of the watchdog, so one missed refresh never clears a live app.
    let heartbeatNanoseconds: UInt64
    /// Seconds of registration asked for (the account's `expires`); refreshed at half of what the registrar grants.
    let expires: Int
    private(set) var phase: Phase = .starting
    /// Whether the app has taken the core.
    private var holdsCore = false

    init(watchdogSeconds: Double, expires: Int) {
        heartbeatNanoseconds = UInt64(max(watchdogSeconds / 3, 0.1) * 1e9)
        self.expires = expires
    }

    /// Whether a MESSAGE that arrives now is the app's to show.
    var receivesMessages: Bool {
        switch phase {
        case .registering, .foreground: true
        default: false
        }
    }

    mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.starting, .foreground(let answer, let at)):
            switch answer {
            case .started:
                return takeCore(forced: false, at: at)
            case .waitingFor(let pids):
                phase = .waitingForExtensions(
                    takeOverAt: at + UInt64(SharedCore.takeOverMilliseconds) * 1_000_000)
                return [
                    .askToStop(pids), .arm(.takeOver, at: at + UInt64(SharedCore.takeOverMilliseconds) * 1_000_000),
                ]
            case .mainCoreHeld(let pid):
                phase = .done(.coreHeld(by: pid))
                return [.finish(.coreHeld(by: pid))]
            }
        case (.waitingForExtensions, .extensionsStopping(let remaining, let at)) where remaining == 0:
            return takeCore(forced: false, at: at)
        case (.waitingForExtensions(let takeOverAt), .timerFired(.takeOver, let at)) where at >= takeOverAt:
            return takeCore(forced: true, at: at)
        case (.registering, .registerAnswered(let status, let granted, let at)):
            guard let status, (200..<300).contains(status) else {
                phase = .done(.registerFailed(status.map { "the registrar answered \($0)" } ?? "no answer"))
                holdsCore = false
                return [
                    .releaseCore,
                    .finish(.registerFailed(status.map { "the registrar answered \($0)" } ?? "no answer")),
                ]
            }
            phase = .foreground
            return [.arm(.refresh, at: at + refreshDelay(granted))]
        case (.foreground, .registerAnswered(let status, let granted, let at)):
            // A refresh: one that fails is tried again sooner; the flow stays open meanwhile.
            let success = status.map { (200..<300).contains($0) } ?? false
            return [.arm(.refresh, at: at + (success ? refreshDelay(granted) : 5_000_000_000))]
        case (.foreground, .timerFired(.refresh, _)):
            return [.register]
        case (_, .timerFired(.heartbeat, let at)) where holdsCore:
            return [.heartbeat, .arm(.heartbeat, at: at + heartbeatNanoseconds)]
        case (.waitingForExtensions, .backgroundAsked), (.starting, .backgroundAsked):
            // Gone before it had the core: nothing to tell the registrar.
            phase = .done(.background)
            return [.releaseCore, .finish(.background)]
        case (.registering, .backgroundAsked(let at)), (.foreground, .backgroundAsked(let at)):
            phase = .leaving
            holdsCore = false
            return [.releaseCore, .register, .arm(.leave, at: at + Self.leaveNanoseconds)]
        case (.leaving, .registerAnswered), (.leaving, .timerFired(.leave, _)):
            phase = .done(.background)
            return [.finish(.background)]
        default:
            return []
        }
    }

    private mutating func takeCore(forced: Bool, at: UInt64) -> [Action] {
        phase = .registering
        holdsCore = true
        return [.takeCore(forced: forced), .arm(.heartbeat, at: at + heartbeatNanoseconds), .register]
    }

    /// When to refresh a registration granted for `granted` seconds (else the account's): at half of it.
    private func refreshDelay(_ granted: Int?) -> UInt64 {
        UInt64(max(granted ?? expires, 2)) * 500_000_000
    }
}
