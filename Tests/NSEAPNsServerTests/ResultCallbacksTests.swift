import Hummingbird
import HummingbirdTesting
import Logging
import NSEAPNsServer
import NSEJSON
import Synchronization
import Testing

/// `ResultCallbacks`: a drain woken by the last callback ending (or its deadline), never by a timer polling a count.
/// Drains are awaited with a bound, so one that never wakes fails instead of hanging the run.
@Suite struct ResultCallbacksTests {
    /// A callback receiver that holds every request until the test answers it.
    actor HeldAnswers {
        private var held: [CheckedContinuation<Int, Never>] = []
        private(set) var received = 0

        func next() async -> Int {
            received += 1
            return await withCheckedContinuation { held.append($0) }
        }

        /// Answers the oldest held request with `status`.
        func answer(_ status: Int) {
            if !held.isEmpty { held.removeFirst().resume(returning: status) }
        }

        /// Answers every request still held (200), so the receiver can stop even when a test failed midway.
        func answerAll() {
            while !held.isEmpty { held.removeFirst().resume(returning: 200) }
        }

        /// Waits (bounded, 10 s) until `count` requests have arrived.
        func waitForRequests(_ count: Int) async throws {
            for _ in 0..<1000 where received < count { try await Task.sleep(nanoseconds: 10_000_000) }
        }

        nonisolated var router: Router<BasicRequestContext> {
            let router = Router()
            router.post("/results") { request, _ -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(status: .init(code: await self.next()))
            }
            return router
        }
    }

    let result: JSON = ["outcome": "rewritten"]

    /// Runs `body` with callbacks pointed at a live receiver on loopback.
    func withReceiver(threads: Int = 2, _ body: @Sendable (ResultCallbacks, HeldAnswers, String) async throws -> Void)
        async throws
    {
        let answers = HeldAnswers()
        let app = Application(router: answers.router)
        try await app.test(.live) { client in
            let callbacks = ResultCallbacks(threads: threads, timeout: 10, logger: Logger(label: "test"))
            do {
                try await body(callbacks, answers, "http://127.0.0.1:\(client.port ?? 0)/results")
            } catch {
                await answers.answerAll()
                throw error
            }
            await answers.answerAll()
        }
    }

    @Test func drainWithNothingInFlightReturnsAtOnce() async throws {
        let callbacks = ResultCallbacks(logger: Logger(label: "test"))
        let drained = Ending.of { await callbacks.drain(seconds: 30) }
        #expect(try await drained.waitForEnd(seconds: 1))
        #expect(callbacks.inFlight == 0)
    }

    @Test func drainWaitsForTheCallbackInFlightAndReturnsWhenItIsAnswered() async throws {
        try await withReceiver { callbacks, answers, url in
            callbacks.post(result, to: url, apnsID: "A")
            try await answers.waitForRequests(1)
            let drained = Ending.of { await callbacks.drain(seconds: 30) }
            try await Task.sleep(nanoseconds: 150_000_000)
            #expect(!drained.hasEnded)
            #expect(callbacks.inFlight == 1)
            let answered = ContinuousClock.now
            await answers.answer(200)
            #expect(try await drained.waitForEnd())
            #expect(callbacks.inFlight == 0)
            let woke = try #require(drained.instant) - answered
            #expect(woke < .seconds(5), "the drain returned \(woke) after the last callback ended")
        }
    }

    @Test func aCallbackPostedOnceADrainBeganIsNotSent() async throws {
        try await withReceiver { callbacks, answers, url in
            callbacks.post(result, to: url, apnsID: "A")
            try await answers.waitForRequests(1)
            let drained = Ending.of { await callbacks.drain(seconds: 30) }
            try await Task.sleep(nanoseconds: 50_000_000)
            callbacks.post(result, to: url, apnsID: "B")
            #expect(callbacks.inFlight == 1)
            await answers.answer(200)
            #expect(try await drained.waitForEnd())
            try await Task.sleep(nanoseconds: 100_000_000)
            #expect(await answers.received == 1)
        }
    }

    @Test func theDeadlineStopsRetriesAndDropsWhatIsStillQueued() async throws {
        // One thread: A runs (held by the receiver), B waits its turn.
        try await withReceiver(threads: 1) { callbacks, answers, url in
            callbacks.post(result, to: url, apnsID: "A")
            callbacks.post(result, to: url, apnsID: "B")
            try await answers.waitForRequests(1)
            let drained = Ending.of { await callbacks.drain(seconds: 0.1) }
            try await Task.sleep(nanoseconds: 300_000_000)
            // Past the deadline, A's 503 would be retried after 0.5 s: it is not, and B is never sent.
            await answers.answer(503)
            #expect(try await drained.waitForEnd())
            for _ in 0..<500 where callbacks.inFlight > 0 { try await Task.sleep(nanoseconds: 2_000_000) }
            #expect(callbacks.inFlight == 0)
            try await Task.sleep(nanoseconds: 700_000_000)
            #expect(await answers.received == 1)
        }
    }

    @Test func concurrentDrainsAllReturnOnceTheLastCallbackEnds() async throws {
        try await withReceiver { callbacks, answers, url in
            callbacks.post(result, to: url, apnsID: "A")
            callbacks.post(result, to: url, apnsID: "B")
            try await answers.waitForRequests(2)
            let endings = (0..<3).map { _ in Ending.of { await callbacks.drain(seconds: 30) } }
            try await Task.sleep(nanoseconds: 100_000_000)
            #expect(endings.allSatisfy { !$0.hasEnded })
            await answers.answer(200)
            try await Task.sleep(nanoseconds: 100_000_000)
            #expect(endings.allSatisfy { !$0.hasEnded }, "a drain returned while a callback was still in flight")
            await answers.answer(200)
            for ending in endings { #expect(try await ending.waitForEnd()) }
            #expect(callbacks.inFlight == 0)
            #expect(await answers.received == 2)
        }
    }
}
