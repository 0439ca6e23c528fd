import NSEDevice
import Testing

@testable import NSEMainApp

/// The main app's rules as a state machine, without processes or a clock.
@Suite struct MainAppMachineTests {
    static let second: UInt64 = 1_000_000_000

    @Test func takesAFreeCoreRegistersAndRefreshes() {
        var app = MainAppMachine(watchdogSeconds: 30, expires: 600)
        #expect(!app.receivesMessages)
        #expect(
            app.handle(.foreground(.started, at: 0)) == [
                .takeCore(forced: false), .arm(.heartbeat, at: 10 * Self.second), .register,
            ])
        #expect(app.phase == .registering && app.receivesMessages)
        // Granted 300 s: refreshed at half of it; the heartbeat every third of the watchdog.
        #expect(
            app.handle(.registerAnswered(status: 200, expires: 300, at: Self.second)) == [
                .arm(.refresh, at: 151 * Self.second)
            ])
        #expect(app.phase == .foreground)
        #expect(app.handle(.timerFired(.refresh, at: 151 * Self.second)) == [.register])
        #expect(
            app.handle(.timerFired(.heartbeat, at: 10 * Self.second)) == [
                .heartbeat, .arm(.heartbeat, at: 20 * Self.second),
            ])
        // A refresh that fails is tried again in 5 s.
        #expect(
            app.handle(.registerAnswered(status: 503, expires: nil, at: 152 * Self.second)) == [
                .arm(.refresh, at: 157 * Self.second)
            ])
    }

    @Test func waitsForStoppingExtensionsThenTakesOverOrForces() {
        var patient = MainAppMachine(watchdogSeconds: 30, expires: 600)
        #expect(
            patient.handle(.foreground(.waitingFor([101, 102]), at: 0)) == [
                .askToStop([101, 102]), .arm(.takeOver, at: 3 * Self.second),
            ])
        #expect(!patient.receivesMessages)
        #expect(patient.handle(.extensionsStopping(remaining: 1, at: Self.second)) == [])
        #expect(patient.handle(.extensionsStopping(remaining: 0, at: Self.second)).first == .takeCore(forced: false))
        // One that never stops: the app takes the core when the wait is over.
        var forced = MainAppMachine(watchdogSeconds: 30, expires: 600)
        _ = forced.handle(.foreground(.waitingFor([101]), at: 0))
        #expect(forced.handle(.timerFired(.takeOver, at: 3 * Self.second)).first == .takeCore(forced: true))
        #expect(forced.phase == .registering)
    }

    @Test func goesToTheBackgroundWithALastRegister() {
        var app = MainAppMachine(watchdogSeconds: 30, expires: 600)
        _ = app.handle(.foreground(.started, at: 0))
        _ = app.handle(.registerAnswered(status: 200, expires: 600, at: 1))
        #expect(
            app.handle(.backgroundAsked(at: 2)) == [
                .releaseCore, .register, .arm(.leave, at: 2 + MainAppMachine.leaveNanoseconds),
            ])
        #expect(app.phase == .leaving && !app.receivesMessages)
        // No heartbeat once the core is released.
        #expect(app.handle(.timerFired(.heartbeat, at: 2)) == [])
        #expect(app.handle(.registerAnswered(status: 200, expires: 600, at: 3)) == [.finish(.background)])
        // Told to go before it had the core: nothing to tell the registrar.
        var early = MainAppMachine(watchdogSeconds: 30, expires: 600)
        _ = early.handle(.foreground(.waitingFor([101]), at: 0))
        #expect(early.handle(.backgroundAsked(at: 0)) == [.releaseCore, .finish(.background)])
        // A registrar that does not answer the last REGISTER: the app leaves anyway.
        var unanswered = MainAppMachine(watchdogSeconds: 30, expires: 600)
        _ = unanswered.handle(.foreground(.started, at: 0))
        _ = unanswered.handle(.backgroundAsked(at: 1))
        #expect(
            unanswered.handle(.timerFired(.leave, at: 1 + MainAppMachine.leaveNanoseconds)) == [.finish(.background)])
    }

    @Test func aHeldCoreOrARefusedRegisterEndsIt() {
        var second = MainAppMachine(watchdogSeconds: 30, expires: 600)
        #expect(second.handle(.foreground(.mainCoreHeld(by: 7), at: 0)) == [.finish(.coreHeld(by: 7))])
        var refused = MainAppMachine(watchdogSeconds: 30, expires: 600)
        _ = refused.handle(.foreground(.started, at: 0))
        #expect(
            refused.handle(.registerAnswered(status: 403, expires: nil, at: 1)) == [
                .releaseCore, .finish(.registerFailed("the registrar answered 403")),
            ])
    }
}
