import NSEHost
import NSEJSON
import NSESystem

/// A sequence's main app: `nse app` for the case's device, started, sent to the background or killed as its steps
/// say. A foreground step with a delay starts the app that much later, while the next steps run.
struct AppSteps {
    let device: String
    private var running: MainAppProcess?
    private var starting: Task<MainAppProcess?, Never>?

    init(device: String) {
        self.device = device
    }

    /// Does what the step says; what happened, for the result (and a background step's expectations).
    mutating func perform(_ step: ReplayCase.AppStep) async throws -> JSON {
        switch step.action {
        case .foreground:
            let device = device
            let start = Task.detached { () -> MainAppProcess? in
                if let delay = step.delay { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
                // Registered, or given up on (its reads block: on a thread of their own).
                return await Threads.run { () -> MainAppProcess? in
                    guard let app = try? MainAppProcess.start(device: device) else { return nil }
                    _ = app.waitFor("registered", timeout: 10)
                    return app
                }
            }
            if step.delay != nil {
                starting = start
                return ["app": "foreground", "delayed_s": .double(step.delay ?? 0)]
            }
            running = await start.value
            return [
                "app": "foreground",
                "registered": .bool(running?.events.contains { $0["event"] == "registered" } ?? false),
            ]
        case .background:
            guard let app = await current() else { return ["app": "background", "error": "the app is not running"] }
            let exit = await Threads.run { app.background(timeout: 5) }
            running = nil
            let shown = app.events.filter { $0["event"] == "message" && $0["shown"] == "in-app" }
            return [
                "app": "background", "exit": JSON.int(exit.map(Int.init)),
                "shown_in_app": .array(shown.compactMap { $0["call_id"] }),
                "events": .array(app.events.compactMap { $0["event"] }),
            ]
        case .kill:
            guard let app = await current() else { return ["app": "kill", "error": "the app is not running"] }
            await Threads.run { app.kill() }
            running = nil
            return ["app": "kill", "pid": .int(Int64(app.pid))]
        }
    }

    /// The app, once a delayed start has happened.
    private mutating func current() async -> MainAppProcess? {
        if let starting {
            running = await starting.value
            self.starting = nil
        }
        return running
    }

    /// The case is over: an app still running goes to the background.
    mutating func end() {
        starting?.cancel()
        if let running { running.background(timeout: 5) }
        running = nil
    }
}
