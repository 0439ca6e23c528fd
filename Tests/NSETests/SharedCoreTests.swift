import NSEDevice
import NSETestSupport
import Testing

/// liblinphone's shared core in the App Group store: one core at a time, the main app first, a watchdog for holders
/// that died. Pids and times are given, so every rule is checked without processes or a clock.
@Suite struct SharedCoreTests {
    func core(watchdog: Double = 30) throws -> SharedCore {
        try AppGroupStore(containerDirectory: try TestSupport.temporaryDirectory()).sharedCore(
            watchdogSeconds: watchdog)
    }

    @Test func extensionsRunTheirCoresWhileTheAppDoesNot() throws {
        let core = try core()
        #expect(try core.state(now: 0) == .none)
        #expect(try core.startExecutor(pid: 101, now: 0) == .started)
        #expect(try core.startExecutor(pid: 102, now: 0) == .started)
        #expect(try core.state(now: 0) == .executorStarted)
        // An extension that ends without being asked leaves no trace.
        #expect(try core.releaseExecutor(pid: 101) == nil)
        #expect(try core.releaseExecutor(pid: 102) == nil)
        #expect(try core.state(now: 0) == .none)
    }

    @Test func theAppTakesTheCoreAtOnceOrAsksRunningExtensionsToStop() throws {
        let core = try core()
        #expect(try core.comeToForeground(pid: 1, now: 0) == .started)
        #expect(try core.state(now: 0) == .mainStarted)
        // While it runs, no extension starts its core, and a second app process is refused.
        #expect(try core.startExecutor(pid: 101, now: 1) == .mainCoreRunning)
        #expect(try core.comeToForeground(pid: 2, now: 1) == .mainCoreHeld(by: 1))
        try core.leaveForeground(pid: 1)
        #expect(try core.state(now: 2) == .none)

        #expect(try core.startExecutor(pid: 101, now: 10) == .started)
        #expect(try core.startExecutor(pid: 102, now: 10) == .started)
        #expect(try core.comeToForeground(pid: 1, now: 11) == .waitingFor([101, 102]))
        #expect(try core.state(now: 11) == .executorStopping)
        #expect(try core.isStopRequested(pid: 101) && core.isStopRequested(pid: 102))
        // Meanwhile no new extension starts (the app is taking over).
        #expect(try core.startExecutor(pid: 103, now: 12) == .mainCoreRunning)
        // Each stopped extension wakes the waiting app; it takes the core once none is stopping.
        #expect(try core.releaseExecutor(pid: 101) == 1)
        #expect(try core.stoppingExecutors(now: 12) == [102])
        #expect(try core.releaseExecutor(pid: 102) == 1)
        #expect(try core.stoppingExecutors(now: 12) == [])
        #expect(try core.state(now: 12) == .executorStopped)
        try core.takeMainCore(pid: 1, now: 13)
        #expect(try core.state(now: 13) == .mainStarted)
    }

    @Test func theWatchdogClearsAHolderThatStoppedRefreshing() throws {
        let core = try core(watchdog: 30)
        #expect(try core.comeToForeground(pid: 1, now: 0) == .started)
        // Refreshed at 20 s: still there at 45 s.
        try core.heartbeat(pid: 1, now: 20_000)
        #expect(try core.startExecutor(pid: 101, now: 45_000) == .mainCoreRunning)
        // Not refreshed for 30 s (the app was killed): cleared, and the extension starts.
        #expect(try core.startExecutor(pid: 101, now: 50_001) == .started)
        // A stopping extension that died is cleared too: the app does not wait for it forever.
        #expect(try core.comeToForeground(pid: 2, now: 50_002) == .waitingFor([101]))
        #expect(try core.stoppingExecutors(now: 80_003) == [])
    }
}

extension SharedCoreTests {
    @Test func twoConnectionsSeeEachOthersClaims() throws {
        let directory = try TestSupport.temporaryDirectory()
        let app = try AppGroupStore(containerDirectory: directory).sharedCore(watchdogSeconds: 30)
        let extensionCore = try AppGroupStore(containerDirectory: directory).sharedCore(watchdogSeconds: 30)
        #expect(try extensionCore.startExecutor(pid: 101) == .started)
        #expect(try app.comeToForeground(pid: 1) == .waitingFor([101]))
        #expect(try extensionCore.isStopRequested(pid: 101))
        #expect(try extensionCore.releaseExecutor(pid: 101) == 1)
        #expect(try app.stoppingExecutors() == [])
        try app.takeMainCore(pid: 1)
        #expect(try extensionCore.state() == .mainStarted)
        try app.leaveForeground(pid: 1)
        #expect(try extensionCore.state() == .none)
    }
}
