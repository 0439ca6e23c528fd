import Foundation
public import NSEDevice
public import NSEJSON
public import NSEPayload
public import NSEProtocol
import NSESystem
import Synchronization

/// The process's link to its host: one reader thread takes the host's lines and hands each to the handler the
/// runner installed; any thread may send. One per process (`ExtensionHost.shared`), as an extension has one host.
public final class ExtensionHost: Sendable {
    public static let shared = ExtensionHost()

    /// What the reader hands on.
    public enum Event: Sendable {
        case request(ServiceRequest)
        case timeWillExpire
        case contentAccepted
        /// The host closed the pipe: no more requests; the process should end.
        case closed
    }

    private struct State {
        var handler: (@Sendable (Event) -> Void)?
        /// The completion of the VoIP report in flight (CallKit and LiveCommunicationKit allow one at a time).
        var pendingReport: (@Sendable (VoIPReportFailure?) -> Void)?
        /// The completions of `add-notification`s sent, in order: the host answers them in turn.
        var pendingAdditions: [@Sendable (NotificationAdditionError?) -> Void] = []
        /// The host closed the pipe: nothing sent from now on is answered.
        var closed = false
        /// The container of the request being served, and its device as read then.
        var container: String?
        var device: Device?
        var started = false
    }

    private let channel = LineChannel(
        input: 0, output: ExtensionHost.takeStandardOutput(), maxLineBytes: ExtensionProtocol.maxLineBytes)
    private let sending = Mutex(())
    private let state = Mutex(State())

    private init() {}

    /// The protocol's own descriptor, a copy of stdout; stdout itself becomes stderr, line-buffered. A developer's
    /// `print` (on iOS, a console line) is then a line of the extension's log, never a line of the protocol: printed
    /// on the protocol's pipe it would be taken for a malformed message, and the extension for broken.
    private static func takeStandardOutput() -> Int32 {
        fflush(nil)
        let protocolOutput = fcntl(1, F_DUPFD_CLOEXEC, 3)
        guard protocolOutput >= 0, dup2(2, 1) >= 0 else { return 1 }
        // glibc's `stdout` through its symbol: Swift 6 refuses a reference to the C global itself.
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "stdout"),
            let stream = symbol.assumingMemoryBound(to: UnsafeMutablePointer<FILE>?.self).pointee
        {
            setvbuf(stream, nil, _IOLBF, 0)
        }
        return protocolOutput
    }

    /// Says `hello` (a process that serves many requests, as iOS keeps an extension's process) and starts reading
    /// the host on a thread of its own; every host message goes to `handler`.
    public func start(handler: @escaping @Sendable (Event) -> Void) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            state.handler = handler
            return !state.started
        }
        guard first else { return }
        send(.hello(ExtensionHello(servesMany: true)))
        let thread = Thread { [self] in readLoop() }
        thread.name = "nse.host-reader"
        thread.start()
    }

    /// Sends one message; `false` when the host no longer reads.
    @discardableResult
    public func send(_ message: ExtensionMessage) -> Bool {
        sending.withLock { _ in channel.send(message) }
    }

    /// The device of the request being served (set before the principal class's instance is made).
    public var device: Device? { state.withLock { $0.device } }
    /// Its container folder.
    public var container: String? { state.withLock { $0.container } }

    /// Records the request being served and its device.
    public func serving(_ request: ServiceRequest) {
        let device = try? Device.cached(at: request.container)
        state.withLock { state in
            state.container = request.container
            state.device = device
        }
    }

    /// `reportNewIncomingVoIPPushPayload`: the report goes to the host, whose answer (nil: accepted) is handed to
    /// `completion` on the reader thread. Without a host (the process not started by nse) it fails at once.
    public func reportVoIP(
        _ payload: JSONObject, framework: VoIPFramework, completion: @escaping @Sendable (VoIPReportFailure?) -> Void
    ) {
        let busy = state.withLock { state -> Bool in
            if state.pendingReport != nil { return true }
            state.pendingReport = completion
            return false
        }
        // A second report while one is in flight: the host would refuse it as CallKit does (invalidClientProcess).
        guard !busy else { return completion(VoIPReportFailure(.invalidClientProcess, framework: framework)) }
        guard send(.reportVoIP(payload, framework: framework)) else {
            let pending = state.withLock { state in
                defer { state.pendingReport = nil }
                return state.pendingReport
            }
            pending?(VoIPReportFailure(.unknown, framework: framework))
            return
        }
    }

    /// `UNUserNotificationCenter.add(_:)`: the host shows or schedules the notification; its answer (nil: added) is
    /// handed to `completion` on the reader thread. Without a host it fails at once (`notificationsNotAllowed`).
    public func addNotification(
        _ addition: NotificationAddition, completion: @escaping @Sendable (NotificationAdditionError?) -> Void
    ) {
        // Queued and sent under the sending lock, so the answers come back in the order of the queue; the state lock
        // only for the queue, never across the write (the reader takes it to hand an answer on).
        let sent = sending.withLock { _ -> Bool in
            let open = state.withLock { state -> Bool in
                guard state.started, !state.closed else { return false }
                state.pendingAdditions.append(completion)
                return true
            }
            guard open else { return false }
            if channel.send(ExtensionMessage.addNotification(addition)) { return true }
            // Not sent: no answer will come for it (the reader cannot have taken it; it answers sent lines only).
            state.withLock { _ = $0.pendingAdditions.popLast() }
            return false
        }
        if !sent { completion(.notificationsNotAllowed) }
    }

    private func readLoop() {
        while true {
            let message: HostMessage?
            do { message = try channel.receive(HostMessage.self) } catch {
                // A line the host would never send: the link is broken; end as if it had closed.
                message = nil
            }
            guard let message else {
                finishPendingReport(VoIPReportFailure(.unknown))
                let additions = state.withLock { state in
                    defer {
                        state.pendingAdditions = []
                        state.closed = true
                    }
                    return state.pendingAdditions
                }
                for completion in additions { completion(.notificationsNotAllowed) }
                deliver(.closed)
                return
            }
            switch message {
            case .request(let request):
                serving(request)
                deliver(.request(request))
            case .timeWillExpire:
                deliver(.timeWillExpire)
            case .contentAccepted:
                deliver(.contentAccepted)
            case .reportVoIPResult(let failure):
                finishPendingReport(failure)
            case .addNotificationResult(let error):
                let completion = state.withLock { state in
                    state.pendingAdditions.isEmpty ? nil : state.pendingAdditions.removeFirst()
                }
                completion?(error)
            }
        }
    }

    private func finishPendingReport(_ failure: VoIPReportFailure?) {
        let pending = state.withLock { state in
            defer { state.pendingReport = nil }
            return state.pendingReport
        }
        pending?(failure)
    }

    private func deliver(_ event: Event) {
        state.withLock { $0.handler }?(event)
    }
}
