import Foundation
import NSEDevice
import NSEExtensionKit
import NSEProtocol
import NSESystem
import Synchronization

/// The process of a Notification Service Extension built against nse's SDK: where iOS's `NSExtensionMain` would
/// start, nse's is one line the build writes beside the developer's files (`nse extension build`), or that a SwiftPM
/// target's `main.swift` holds (docs/sdk.md):
///
///     NSEServiceExtension.main { NotificationService() }
///
/// It serves pushes one after another, as iOS keeps an extension's process: for each, a new instance of the
/// principal class and ``UNNotificationServiceExtension/didReceive(_:withContentHandler:)`` on the main thread, whose
/// run loop runs (the main queue, the main actor, timers scheduled there), as on iOS;
/// ``UNNotificationServiceExtension/serviceExtensionTimeWillExpire()`` on another thread when the host says time is
/// running out (Apple: "on a separate thread"), so an instance that blocks the main thread still hears it; the first
/// content handed to the handler sent to the host. nse's own name, not Apple's.
public enum NSEServiceExtension {
    public static func main(_ makePrincipal: @escaping () -> UNNotificationServiceExtension) -> Never {
        // Under `--extension-launch fork`, this process forks the push processes, each of which goes on from here.
        // Nothing of the developer's code runs before: their globals are set up in each push's process. Foundation
        // has read the environment by now (the App Group's preferences folder is the device's): one server per device.
        ForkServer.serveIfAsked(environmentAtStart: true, warmUp: {})
        // A warm process keeps its heap's top between pushes (the reference extension's policy too).
        ExtensionHeap.keepTop()
        let runner = Runner(makePrincipal: makePrincipal)
        ExtensionHost.shared.start { event in runner.handle(event) }
        // The main thread's run loop, not dispatchMain(), which on Linux ends the main thread and serves the main
        // queue from a worker: `Thread.isMainThread` was false there, `DispatchQueue.main.sync` from it trapped, and
        // a `Timer` scheduled in didReceive never fired. A timer that never fires keeps the loop from finding itself
        // without sources and returning.
        RunLoop.main.add(Timer(timeInterval: 1e9, repeats: true) { _ in }, forMode: .default)
        while true { RunLoop.main.run() }
    }
}

/// The requests of one process, one at a time.
final class Runner: @unchecked Sendable {
    /// The request being served: its instance, and whether its content went to the host.
    private struct Active {
        var requestID: String
        var instance: Unchecked<UNNotificationServiceExtension>?
        var delivered = false
        /// didReceive has returned (the main thread is free again).
        var returned = false
    }

    private let makePrincipal: () -> UNNotificationServiceExtension
    private let expiry = DispatchQueue(label: "nse.extension.expiry")
    private let active = Mutex<Active?>(nil)

    init(makePrincipal: @escaping () -> UNNotificationServiceExtension) {
        self.makePrincipal = makePrincipal
    }

    func handle(_ event: ExtensionHost.Event) {
        switch event {
        case .request(let request):
            let device = ExtensionHost.shared.device
            AppGroupDefaults.reload(groups: device?.config.appGroups ?? [])
            // A warm process's notes of the last request do not carry over.
            _ = RequestNotes.take()
            // Apple's classes are not Sendable; each crosses to its queue once, and is used there.
            let unRequest = Unchecked(RequestDecoding.request(request, device: device))
            active.withLock { $0 = Active(requestID: request.requestID) }
            DispatchQueue.main.async { [self] in
                let instance = makePrincipal()
                active.withLock { $0?.instance = Unchecked(instance) }
                let requestID = request.requestID
                // The request's own scratch folder: the host takes what it keeps from it and removes it.
                let scratch = Path.join(request.container, "tmp", "extension", requestID)
                instance.receive(unRequest.value) { [self] content in
                    deliver(content, requestID: requestID, scratch: scratch)
                }
                active.withLock { if $0?.requestID == requestID { $0?.returned = true } }
            }
        case .timeWillExpire:
            guard
                let (instance, returned) = active.withLock({ active in
                    active?.instance.map { ($0, active?.returned ?? false) }
                })
            else { return }
            if !returned {
                // The likeliest cause nse can name: a Task the override started runs on the main actor here, behind
                // the didReceive that waits for it (docs/sdk.md). One line on stderr, into the result.
                FileHandle.standardError.write(
                    Data(
                        "nse: didReceive has not returned by the expiry notice: it blocks the main thread (a Task it started and waits for runs on the main actor, behind it: docs/sdk.md)\n"
                            .utf8))
            }
            expiry.async { instance.value.timeWillExpire() }
        case .contentAccepted:
            finishRequest()
            ExtensionHost.shared.send(.ready)
        case .closed:
            finishRequest()
            exit(0)
        }
    }

    /// The content handler: the first call for a request counts, later ones are ignored, as on iOS.
    private func deliver(_ content: UNNotificationContent, requestID: String, scratch: String) {
        let first = active.withLock { active -> Bool in
            guard var current = active, current.requestID == requestID, !current.delivered else { return false }
            current.delivered = true
            active = current
            return true
        }
        guard first else { return }
        ExtensionHost.shared.send(.content(ContentEncoding.delivered(content, scratch: scratch)))
    }

    /// The instance is gone; what it wrote to its App Groups' defaults is on disk for the next process.
    private func finishRequest() {
        active.withLock { $0 = nil }
        AppGroupDefaults.save(groups: ExtensionHost.shared.device?.config.appGroups ?? [])
    }
}

/// A value of one of Apple's classes (not `Sendable`, as on iOS) handed to the one queue that uses it.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }
}
