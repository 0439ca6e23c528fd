import NSEDevice
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESystem
import NSETestSupport
import Synchronization
import Testing

@testable import NSEHost

/// The host's rules as a state machine, without processes: events in, actions out.
@Suite struct ExtensionMachineTests {
    static let second: UInt64 = 1_000_000_000
    let request = ServiceRequest(
        requestID: "r1", pushType: .alert, payload: ["aps": ["alert": "hi", "mutable-content": 1]], container: "/tmp/d",
        budgetMilliseconds: 2000, deadlineUnixMilliseconds: 0)
    let limits = ExtensionLimits(budget: 2, grace: 0.5, memoryLimitKilobytes: 1000)
    let content = DeliveredContent(content: ["aps": ["alert": ["title": "T", "body": "B"]]], reason: "ok")

    func started(filtering: Bool = false) -> ExtensionMachine {
        var session = ExtensionMachine(request: request, limits: limits, filteringEntitlement: filtering)
        #expect(session.handle(.launched(at: 10 * Self.second)) == [.send(.request(request))])
        return session
    }

    @Test func sendsTheRequestAndArmsTheBudget() {
        var session = ExtensionMachine(request: request, limits: limits, filteringEntitlement: false)
        #expect(session.phase == .launching && session.deadline == nil)
        // Nothing counts before the launch.
        #expect(session.handle(.contentProposed(content, at: 1)) == [])
        #expect(session.handle(.launched(at: 10 * Self.second)) == [.send(.request(request))])
        #expect(session.phase == .running(expiryAt: 12 * Self.second))
        #expect(session.timerEvent(now: 12 * Self.second - 1) == nil)
        #expect(session.timerEvent(now: 12 * Self.second) == .expiryNoticeDue(at: 12 * Self.second))
    }

    @Test func contentBeforeTheBudgetIsTakenAndStdinClosed() {
        var session = started()
        #expect(
            session.handle(.contentProposed(content, at: 11 * Self.second)) == [
                .accept(ExtensionHandover(content, record: session.record)), .closeStdin,
            ])
        #expect(session.phase == .delivered(endAt: 11 * Self.second + 1_000_000_000))
        #expect(
            session.record.delivered == content && !session.record.deliveredAfterExpiry && !session.record.expirySent)
        // Only the first content counts; later lines and reports are ignored, and so is a broken line.
        let other = DeliveredContent(content: [:])
        #expect(session.handle(.contentProposed(other, at: 11 * Self.second)) == [])
        #expect(session.handle(.voipReportAsked([:])) == [])
        #expect(session.handle(.protocolViolation("x")) == [])
        #expect(session.record.delivered == content && !session.record.voipReported)
        #expect(session.handle(.pipesClosed) == [])
        #expect(session.handle(.exited) == [.finish])
        #expect(session.phase == .finished && session.record.termination == .exited)
    }

    @Test func aWarmProcessKeepsItsStdinAndIsReleasedOnReady() {
        let hello = ExtensionHello(servesMany: true)
        var session = ExtensionMachine(
            request: request, limits: limits, filteringEntitlement: false, terms: .init(keep: true))
        _ = session.handle(.launched(at: 10 * Self.second))
        #expect(session.handle(.helloReceived(hello)) == [] && session.record.hello == hello)
        // The content is accepted, and stdin stays open for the next request.
        #expect(
            session.handle(.contentProposed(content, at: 11 * Self.second)) == [
                .accept(ExtensionHandover(content, record: session.record))
            ])
        #expect(session.handle(.readyReceived) == [.release])
        #expect(session.phase == .finished && session.record.released && session.record.termination == .exited)
    }

    @Test func aProcessThatDidNotSayItServesManyIsNotKept() {
        for hello in [nil, ExtensionHello(servesMany: false)] {
            var session = ExtensionMachine(
                request: request, limits: limits, filteringEntitlement: false, terms: .init(keep: true))
            _ = session.handle(.launched(at: 10 * Self.second))
            if let hello { _ = session.handle(.helloReceived(hello)) }
            #expect(
                session.handle(.contentProposed(content, at: 11 * Self.second)) == [
                    .accept(ExtensionHandover(content, record: session.record)), .closeStdin,
                ])
            // Its `ready` is one more line after the content: it does not count.
            #expect(session.handle(.readyReceived) == [] && !session.record.released)
        }
        // Nor a process the host does not keep (fresh), whatever it said, nor one whose content was not kept.
        var fresh = ExtensionMachine(request: request, limits: limits, filteringEntitlement: false)
        _ = fresh.handle(.launched(at: 0))
        _ = fresh.handle(.helloReceived(ExtensionHello(servesMany: true)))
        #expect(fresh.handle(.contentProposed(content, at: 1)).last == .closeStdin)
        var refused = ExtensionMachine(
            request: request, limits: limits, filteringEntitlement: false,
            terms: .init(keep: true, hello: ExtensionHello(servesMany: true)))
        _ = refused.handle(.launched(at: 0))
        #expect(refused.handle(.contentProposed(content, at: 1)).count == 1)
        #expect(refused.handle(.handoverRefused) == [.closeStdin])
        #expect(refused.handle(.readyReceived) == [])
        // A kept process that never says `ready` is ended after the linger time.
        var silent = ExtensionMachine(
            request: request, limits: limits, filteringEntitlement: false,
            terms: .init(keep: true, hello: ExtensionHello(servesMany: true)))
        _ = silent.handle(.launched(at: 0))
        _ = silent.handle(.contentProposed(content, at: Self.second))
        #expect(silent.timerEvent(now: 2 * Self.second) == .lingerOver)
        #expect(silent.handle(.lingerOver) == [.kill(.lingered), .finish] && !silent.record.released)
    }

    @Test func belowIOS12AFreshProcessMustAnswerWithinItsStartTime() {
        let terms = ExtensionMachine.ProcessTerms(startTime: Self.second)
        var slow = ExtensionMachine(request: request, limits: limits, filteringEntitlement: false, terms: terms)
        _ = slow.handle(.launched(at: 10 * Self.second))
        #expect(slow.phase == .starting(expiryAt: 12 * Self.second, answerBy: 11 * Self.second))
        #expect(slow.deadline == 11 * Self.second)
        #expect(slow.timerEvent(now: 11 * Self.second - 1) == nil)
        #expect(slow.timerEvent(now: 11 * Self.second) == .startTimeOver)
        #expect(slow.handle(.startTimeOver) == [.kill(.slowStart), .finish])
        #expect(slow.record.termination == .slowStart)
        // Any line in time meets the rule: a hello, then the budget runs as usual.
        var quick = ExtensionMachine(request: request, limits: limits, filteringEntitlement: false, terms: terms)
        _ = quick.handle(.launched(at: 10 * Self.second))
        _ = quick.handle(.helloReceived(ExtensionHello(servesMany: false)))
        #expect(quick.phase == .running(expiryAt: 12 * Self.second))
        #expect(quick.timerEvent(now: 11 * Self.second) == nil)
        // A budget shorter than the start time: the expiry notice comes first, while it is still starting.
        let short = ExtensionLimits(budget: 0.5, grace: 0.5, memoryLimitKilobytes: 1000)
        var early = ExtensionMachine(request: request, limits: short, filteringEntitlement: false, terms: terms)
        _ = early.handle(.launched(at: 0))
        #expect(early.timerEvent(now: Self.second / 2) == .expiryNoticeDue(at: Self.second / 2))
    }

    @Test func budgetThenGraceThenKill() {
        var session = started()
        let due = session.timerEvent(now: 12 * Self.second)
        #expect(due == .expiryNoticeDue(at: 12 * Self.second))
        #expect(session.handle(due!) == [.send(.timeWillExpire)])
        #expect(session.record.expirySent && session.phase == .expiring(killAt: 12 * Self.second + 500_000_000))
        #expect(session.timerEvent(now: 12 * Self.second + 499_999_999) == nil)
        let over = session.timerEvent(now: 12 * Self.second + 500_000_000)
        #expect(over == .graceOver)
        #expect(session.handle(over!) == [.kill(.budget), .finish])
        #expect(session.record.termination == .budget && session.record.delivered == nil)
        // Over is over.
        #expect(
            session.handle(.contentProposed(content, at: 13 * Self.second)) == [] && session.record.delivered == nil)
    }

    @Test func bestAttemptAfterTheExpiryNoticeIsMarked() {
        var session = started()
        _ = session.handle(.expiryNoticeDue(at: 12 * Self.second))
        #expect(
            session.handle(.contentProposed(content, at: 12 * Self.second + 1)) == [
                .accept(ExtensionHandover(content, record: session.record)), .closeStdin,
            ])
        #expect(session.record.deliveredAfterExpiry && session.record.termination == .exited)
    }

    @Test func aZeroGraceKillsAtTheNotice() {
        var session = ExtensionMachine(
            request: request, limits: ExtensionLimits(budget: 1, grace: 0), filteringEntitlement: false)
        _ = session.handle(.launched(at: 0))
        #expect(session.handle(.expiryNoticeDue(at: Self.second)) == [.send(.timeWillExpire)])
        #expect(session.timerEvent(now: Self.second) == .graceOver)
    }

    @Test func memoryOverTheLimitKillsLikeJetsamUntilThePipesClose() {
        var session = started()
        #expect(session.handle(.memorySampled(residentPeak: 5000, footprint: 900)) == [])
        #expect(session.handle(.memorySampled(residentPeak: 5000, footprint: 1000)) == [])
        #expect(
            session.handle(.memorySampled(residentPeak: 5000, footprint: 1001)) == [
                .kill(.memory(footprintKilobytes: 1001)), .finish,
            ])
        #expect(session.record.termination == .memory(footprintKilobytes: 1001))
        #expect(session.record.peakKilobytes == 5000 && session.record.peakFootprintKilobytes == 1001)

        // After delivery the limit still holds while the process is there; once it is leaving, it is only measured.
        var delivered = started()
        _ = delivered.handle(.contentProposed(content, at: 11 * Self.second))
        #expect(
            delivered.handle(.memorySampled(residentPeak: 3000, footprint: 2000)) == [
                .kill(.memory(footprintKilobytes: 2000)), .finish,
            ])
        var leaving = started()
        _ = leaving.handle(.pipesClosed)
        #expect(leaving.handle(.memorySampled(residentPeak: 6000, footprint: 5000)) == [])
        #expect(leaving.record.peakFootprintKilobytes == 5000 && leaving.record.termination == .exited)
    }

    /// iOS counts an extension's footprint, not the clean pages of its code: a resident set far over the limit
    /// whose dirty memory is small is not killed. Where the kernel cannot tell the footprint, the resident peak is
    /// what is judged.
    @Test func theLimitJudgesTheFootprintNotTheResidentSet() {
        var session = started()
        #expect(session.handle(.memorySampled(residentPeak: 40_000, footprint: 800)) == [])
        #expect(session.record.peakKilobytes == 40_000 && session.record.termination == .exited)
        var old = started()
        #expect(
            old.handle(.memorySampled(residentPeak: 1001, footprint: nil)) == [
                .kill(.memory(footprintKilobytes: 1001)), .finish,
            ])
        #expect(old.record.peakFootprintKilobytes == nil)
    }

    @Test func aDeliveredExtensionThatLingersIsEndedWithoutBlame() {
        var session = started()
        _ = session.handle(.contentProposed(content, at: 11 * Self.second))
        #expect(session.timerEvent(now: 11 * Self.second + 1_000_000_000) == .lingerOver)
        #expect(session.handle(.lingerOver) == [.kill(.lingered), .finish])
        #expect(session.record.termination == .exited && session.record.delivered == content)
    }

    @Test func voipReportNeedsTheEntitlementAndIsAnsweredOnce() {
        let call: JSONObject = ["call": true]
        var entitled = started(filtering: true)
        #expect(entitled.handle(.voipReportAsked(call)) == [.send(.reportVoIPResult(nil))])
        #expect(entitled.record.acceptedVoIPPayload == call && entitled.record.voipError == nil)
        let twice = VoIPReportFailure(.invalidClientProcess)
        #expect(entitled.handle(.voipReportAsked(["again": true])) == [.send(.reportVoIPResult(twice))])
        #expect(entitled.record.acceptedVoIPPayload == call && entitled.record.voipError == twice)

        var plain = started(filtering: false)
        let unentitled = VoIPReportFailure(.missingNotificationFilteringEntitlement)
        #expect(plain.handle(.voipReportAsked(call)) == [.send(.reportVoIPResult(unentitled))])
        #expect(plain.record.voipReported && plain.record.acceptedVoIPPayload == nil)
        #expect(plain.phase == .running(expiryAt: 12 * Self.second))
    }

    /// LiveCommunicationKit's `ConversationManager.reportNewIncomingVoIPPushPayload` answers as CallKit's, its
    /// refusals its own; on a release without it the extension dies as on a missing method.
    @Test func liveCommunicationKitsReportFollowsTheSameRulesOnItsReleases() {
        let call: JSONObject = ["call": true]
        var entitled = started(filtering: true)
        #expect(
            entitled.handle(.voipReportAsked(call, framework: .liveCommunicationKit)) == [.send(.reportVoIPResult(nil))]
        )
        #expect(entitled.record.acceptedVoIPPayload == call && entitled.record.voipFramework == .liveCommunicationKit)
        let twice = VoIPReportFailure(.invalidClientProcess, framework: .liveCommunicationKit)
        #expect(
            entitled.handle(.voipReportAsked(call, framework: .liveCommunicationKit)) == [
                .send(.reportVoIPResult(twice))
            ])

        var plain = started(filtering: false)
        #expect(
            plain.handle(.voipReportAsked(call, framework: .liveCommunicationKit)) == [
                .send(
                    .reportVoIPResult(
                        VoIPReportFailure(.missingNotificationFilteringEntitlement, framework: .liveCommunicationKit)))
            ])

        for (release, framework, first) in [
            (IOSVersion(major: 17, minor: 3), VoIPFramework.liveCommunicationKit, "17.4"),
            (IOSVersion(major: 14, minor: 4), .callKit, "14.5"),
        ] {
            var old = ExtensionMachine(request: request, limits: limits, filteringEntitlement: true, release: release)
            _ = old.handle(.launched(at: 10 * Self.second))
            let why =
                "called \(framework.rawValue)'s reportNewIncomingVoIPPushPayload, which came with iOS \(first); the device runs iOS \(release)"
            #expect(
                old.handle(.voipReportAsked(call, framework: framework)) == [.kill(.protocolViolation(why)), .finish])
            #expect(old.record.termination == .protocolViolation(why) && old.record.acceptedVoIPPayload == nil)
        }
        var current = ExtensionMachine(
            request: request, limits: limits, filteringEntitlement: true, release: IOSVersion(major: 17, minor: 4))
        _ = current.handle(.launched(at: 10 * Self.second))
        #expect(
            current.handle(.voipReportAsked(call, framework: .liveCommunicationKit)) == [.send(.reportVoIPResult(nil))])
    }

    @Test func exitWithoutContentEndsTheSession() {
        var session = started()
        #expect(session.handle(.pipesClosed) == [])
        #expect(session.handle(.exited) == [.finish])
        #expect(session.record.termination == .exited && session.record.delivered == nil)
    }

    @Test func protocolViolationsKill() {
        var session = started()
        #expect(session.handle(.protocolViolation("bad")) == [.kill(.protocolViolation("bad")), .finish])
        #expect(session.record.termination == .protocolViolation("bad"))
        var failed = ExtensionMachine(request: request, limits: limits, filteringEntitlement: false)
        #expect(failed.handle(.launchFailed("no such file")) == [.finish])
        #expect(failed.record.termination == .spawnFailed("no such file"))
    }

    /// Lines as the driver sees them, through the session's reading of the protocol.
    @Test func linesBecomeProtocolEvents() {
        var session = process()
        #expect(session.observe(ProcessObservation.launched(at: 0)) == [.write(HostMessage.request(request).line)])
        #expect(session.observe(ProcessObservation.line(Array("  \r".utf8), at: 1)) == [])
        #expect(
            session.observe(ProcessObservation.line(Array(#"{"type":"report-voip","payload":{}}"#.utf8), at: 1))
                == [
                    .write(
                        HostMessage.reportVoIPResult(VoIPReportFailure(.missingNotificationFilteringEntitlement)).line)
                ])
        #expect(session.observe(ProcessObservation.line(Array("not json".utf8), at: 1)) == [.kill, .finish])
        guard case .protocolViolation(let reason) = session.session.record.termination else {
            Issue.record("not a protocol violation")
            return
        }
        #expect(reason.hasPrefix("the extension sent a line that is not JSON"))
        var long = process()
        _ = long.observe(ProcessObservation.launched(at: 0))
        #expect(long.observe(ProcessObservation.lineTooLong) == [.kill, .finish])
        #expect(
            long.session.record.termination == .protocolViolation("the extension sent a line longer than 65536 bytes"))
        var content = process()
        _ = content.observe(ProcessObservation.launched(at: 0))
        #expect(
            content.observe(ProcessObservation.line(Array(#"{"type":"content","content":{}}"#.utf8), at: 5)) == [
                .write(HostMessage.contentAccepted.line), .closeStdin,
            ])
        #expect(content.session.phase == .delivered(endAt: 5 + 1_000_000_000))
        #expect(content.observe(ProcessObservation.deadline(now: 5 + 1_000_000_000)) == [.kill, .finish])
    }

    /// A host that records results keeps the content before it says `content-accepted`, and says nothing when it
    /// could not keep it (the extension then keeps its App Group messages).
    @Test func contentIsAcceptedOnlyOnceKept() {
        let kept = Mutex<[ExtensionHandover]>([])
        let line = Array(#"{"type":"content","content":{"aps":{"alert":"hi"}},"reason":"r"}"#.utf8)
        var keeping = process { handover in
            kept.withLock { $0.append(handover) }
            return true
        }
        _ = keeping.observe(ProcessObservation.launched(at: 0))
        #expect(
            keeping.observe(ProcessObservation.line(line, at: 5)) == [
                .write(HostMessage.contentAccepted.line), .closeStdin,
            ])
        #expect(
            kept.withLock { $0.map(\.content) } == [DeliveredContent(content: ["aps": ["alert": "hi"]], reason: "r")])
        var failing = process { _ in false }
        _ = failing.observe(ProcessObservation.launched(at: 0))
        #expect(failing.observe(ProcessObservation.line(line, at: 5)) == [.closeStdin])
        #expect(failing.session.record.delivered?.reason == "r")
        // Only the first content is kept, as only the first counts.
        #expect(keeping.observe(ProcessObservation.line(line, at: 6)) == [])
        #expect(kept.withLock { $0.count } == 1)
    }

    /// `add-notification`: the host shows it in the device's Notification Center (or keeps it until its trigger
    /// fires) and answers, in order; what it refuses is answered with UNError's code and not listed. A fresh process
    /// adds nothing after its content (its stdin is closed: it would never hear the answer); a handover carries what
    /// was added.
    @Test func localNotificationsAreAddedAnsweredAndListed() throws {
        let device = try Device.create(at: try TestSupport.temporaryDirectory("nse-local") + "/bob")
        var session = process()
        session.notifications = LocalNotificationPoster(device: device, strings: StringsTable())
        _ = session.observe(ProcessObservation.launched(at: 0))
        func add(_ json: String) -> [ProcessAction] {
            session.observe(ProcessObservation.line(Array(json.utf8), at: 1))
        }
        func answer(_ error: NotificationAdditionError?) -> [ProcessAction] {
            [.write(HostMessage.addNotificationResult(error).line)]
        }
        #expect(
            add(
                #"{"type":"add-notification","identifier":"m1","content":{"aps":{"alert":{"title":"Alice","body":"Lunch?"},"thread-id":"alice"}}}"#
            ) == answer(nil))
        #expect(
            add(#"{"type":"add-notification","identifier":"e","content":{"aps":{"badge":3}}}"#)
                == answer(.notificationInvalidNoContent))
        #expect(
            add(
                #"{"type":"add-notification","identifier":"r","content":{"aps":{"alert":"x"}},"trigger":{"type":"time-interval","seconds":30,"repeats":true,"fire_at":1}}"#
            ) == answer(.notificationInvalidNoDate))
        let later = SystemClock.unixMilliseconds() + 3_600_000
        #expect(
            add(
                #"{"type":"add-notification","identifier":"reminder","content":{"aps":{"alert":"Unread"}},"trigger":{"type":"time-interval","seconds":3600,"repeats":false,"fire_at":\#(later)}}"#
            ) == answer(nil))
        #expect(session.session.record.localNotifications.map(\.identifier) == ["m1", "reminder"])
        #expect(session.session.record.localNotifications.first?.threadIdentifier == "alice")
        let center = try device.notificationCenter.state()
        #expect(center.delivered.map(\.identifier) == ["m1"] && center.delivered.first?.local == [:])
        #expect(center.pending.map(\.identifier) == ["reminder"] && center.pending.first?.notification.date == later)

        // After the content: a fresh process's stdin is closed, nothing is added; the handover lists the others.
        let content = session.observe(ProcessObservation.line(Array(#"{"type":"content","content":{}}"#.utf8), at: 2))
        #expect(content == [.write(HostMessage.contentAccepted.line), .closeStdin])
        #expect(add(#"{"type":"add-notification","identifier":"m2","content":{"aps":{"alert":"Late"}}}"#) == [])
        #expect(try device.notificationCenter.state().delivered.map(\.identifier) == ["m1"])
        let handover = ExtensionHandover(DeliveredContent(content: [:]), record: session.session.record)
        let read = try ExtensionHandover(json: JSON.parse(handover.json.serialized()))
        #expect(read.localNotifications.map(\.identifier) == ["m1", "reminder"])
        #expect(read.localNotifications == handover.localNotifications)

        // A host with nowhere to put them refuses them.
        var nowhere = process()
        _ = nowhere.observe(ProcessObservation.launched(at: 0))
        #expect(
            nowhere.observe(
                ProcessObservation.line(
                    Array(#"{"type":"add-notification","identifier":"m1","content":{"aps":{"alert":"x"}}}"#.utf8), at: 1
                )) == answer(.notificationsNotAllowed))
    }

    /// A repeating calendar trigger is kept with the firings the framework worked out (the result lists the trigger as
    /// the app made it); firings that cannot be its own are refused as a trigger with no date; without them it is kept
    /// pending, never fired.
    @Test func aRepeatingCalendarTriggerIsKeptWithItsFirings() throws {
        let device = try Device.create(at: try TestSupport.temporaryDirectory("nse-local") + "/bob")
        var session = process()
        session.notifications = LocalNotificationPoster(device: device, strings: StringsTable())
        _ = session.observe(ProcessObservation.launched(at: 0))
        func add(_ identifier: String, _ trigger: String) -> [ProcessAction] {
            let line =
                #"{"type":"add-notification","identifier":"\#(identifier)","content":{"aps":{"alert":"Stand-up"}},"trigger":\#(trigger)}"#
            return session.observe(ProcessObservation.line(Array(line.utf8), at: 1))
        }
        let ok = [ProcessAction.write(HostMessage.addNotificationResult(nil).line)]
        let refused = [ProcessAction.write(HostMessage.addNotificationResult(.notificationInvalidNoDate).line)]
        let first = SystemClock.unixMilliseconds() + 3_600_000
        let week: Int64 = 7 * 86_400_000
        let calendar = #"{"type":"calendar","repeats":true,"date_components":{"weekday":2,"hour":9}"#
        #expect(add("weekly", calendar + #","fire_at":\#(first),"firings":[\#(first),\#(first + week)]}"#) == ok)
        #expect(add("unsorted", calendar + #","fire_at":\#(first),"firings":[\#(first),\#(first)]}"#) == refused)
        #expect(add("elsewhere", calendar + #","fire_at":\#(first),"firings":[\#(first + 1)]}"#) == refused)
        #expect(add("without", calendar + #","fire_at":\#(first + 60_000)}"#) == ok)
        // Numbers no framework makes are refused, not a trap in the host (Int64's ends, an interval of 10¹⁸ s).
        #expect(add("huge", calendar + #","fire_at":-1,"firings":[-1,9223372036854775807]}"#) == refused)
        #expect(add("wraps", calendar + #","fire_at":1,"firings":[1,-9223372036854775808]}"#) == refused)
        let aeon = #"{"type":"time-interval","seconds":1e18,"repeats":true,"fire_at":\#(first)}"#
        #expect(add("aeon", aeon) == refused)
        let listed = session.session.record.localNotifications
        #expect(listed.map(\.identifier) == ["weekly", "without"])
        #expect(listed.first?.trigger?.firings == nil && listed.first?.json["trigger"]?["fire_at"] == .int(first))
        let pending = try device.notificationCenter.state(now: first + week + 1).pending
        #expect(pending.map(\.identifier) == ["without", "weekly"])
        #expect(pending.last?.fired == first + week && pending.last?.nextFire == nil)
        #expect(pending.first?.nextFire == nil && pending.first?.fires == false)
        #expect(pending.last?.notification.local?["trigger"]?["firings"] == nil)
        #expect(try device.notificationCenter.state(now: first + week + 1).delivered.map(\.date) == [first + week])
    }

    /// A local notification shown at once gets its registered category's buttons and, with previews hidden, the
    /// category's placeholder (`%u`: the thread's count), as a push's own notification does.
    @Test func aLocalNotificationShowsItsCategorysButtonsAndPlaceholder() throws {
        var device = try Device.create(at: try TestSupport.temporaryDirectory("nse-local") + "/bob")
        try device.notificationCategories.replace(with: [
            [
                "identifier": "MSG", "options": 4, "hidden_previews_body_placeholder": "%u new",
                "actions": [["identifier": "like", "title": "Like", "options": 0]],
            ]
        ])
        device.config.lockState = .locked
        try device.save()
        let poster = LocalNotificationPoster(device: device, strings: StringsTable())
        let content: JSONObject = [
            "aps": ["alert": ["title": "Alice", "body": "Hi"], "category": "MSG", "thread-id": "a"]
        ]
        _ = poster.add(NotificationAddition(identifier: "m1", content: content))
        let second = try poster.add(NotificationAddition(identifier: "m2", content: content)).get()
        #expect(second.actions == [["identifier": "like", "title": "Like", "options": []]])
        #expect(second.hiddenPreview == ["title": "Alice", "body": "2 new"])
        #expect(try LocalNotification(json: second.json) == second, "the result's form reads back")
        let plain = try poster.add(NotificationAddition(identifier: "m3", content: ["aps": ["alert": "x"]])).get()
        #expect(plain.actions.isEmpty && plain.hiddenPreview == ["body": "Notification"])
    }

    /// A warm process still hears answers after its content (its stdin stays open); past 256 additions for one push
    /// (answers it may not read yet must fit in its stdin pipe) the process is killed for breaking the protocol.
    @Test func aWarmProcessAddsAfterItsContentAndAFloodIsKilled() throws {
        let device = try Device.create(at: try TestSupport.temporaryDirectory("nse-local") + "/bob")
        let poster = LocalNotificationPoster(device: device, strings: StringsTable())
        let line = Array(#"{"type":"add-notification","identifier":"m","content":{"aps":{"alert":"x"}}}"#.utf8)
        var warm = ExtensionProcess(
            session: ExtensionMachine(
                request: request, limits: limits, filteringEntitlement: false,
                terms: .init(keep: true, hello: ExtensionHello(servesMany: true))),
            keepContent: nil, notifications: poster)
        _ = warm.observe(ProcessObservation.launched(at: 0))
        #expect(
            warm.observe(ProcessObservation.line(Array(#"{"type":"content","content":{}}"#.utf8), at: 1)) == [
                .write(HostMessage.contentAccepted.line)
            ])
        #expect(
            warm.observe(ProcessObservation.line(line, at: 2)) == [.write(HostMessage.addNotificationResult(nil).line)])
        #expect(warm.session.record.localNotifications.count == 1)

        var flood = process()
        flood.notifications = poster
        _ = flood.observe(ProcessObservation.launched(at: 0))
        for _ in 0..<ExtensionMachine.maxAdditions { _ = flood.observe(ProcessObservation.line(line, at: 1)) }
        #expect(flood.session.record.localNotifications.count == ExtensionMachine.maxAdditions)
        #expect(flood.observe(ProcessObservation.line(line, at: 1)) == [.kill, .finish])
        #expect(
            flood.session.record.termination
                == .protocolViolation("the extension added more than 256 local notifications for one push"))
        // Every answer it could have left unread fits in a pipe.
        #expect(HostMessage.addNotificationResult(.notificationInvalidNoContent).line.count * 256 < 65_536)
    }

    /// What the host keeps with the content is all the verdict needs: the call offer it accepted, the expiry.
    @Test func aHandoverCarriesWhatTheVerdictNeedsAndReadsBack() throws {
        var session = ExtensionMachine(request: request, limits: limits, filteringEntitlement: true)
        _ = session.handle(.launched(at: 0))
        _ = session.handle(.voipReportAsked(["from": "sip:alice@example.org"]))
        _ = session.handle(.expiryNoticeDue(at: 30 * Self.second))
        let actions = session.handle(
            .contentProposed(DeliveredContent(content: [:], reason: "voip"), at: 30 * Self.second + 1))
        guard case .accept(let handover)? = actions.first else {
            Issue.record("the content is not accepted: \(actions)")
            return
        }
        #expect(actions == [.accept(handover), .closeStdin])
        #expect(handover.content == DeliveredContent(content: [:], reason: "voip"))
        #expect(handover.afterExpiry && handover.voipReported && handover.voipError == nil)
        #expect(handover.acceptedVoIPPayload == ["from": "sip:alice@example.org"])
        let read = try ExtensionHandover(json: JSON.parse(handover.json.serialized()))
        #expect(read == handover)
        #expect(read.record == session.record)
        #expect(throws: JSONFieldError.self) { try ExtensionHandover(json: ["content": ["type": "report-voip"]]) }
    }

    private func process(keep: (@Sendable (ExtensionHandover) -> Bool)? = nil) -> ExtensionProcess {
        ExtensionProcess(
            session: ExtensionMachine(request: request, limits: limits, filteringEntitlement: false),
            keepContent: keep)
    }
}

/// The app's VoIP handler as a state machine: payload in, report out, within the deadline and 64 KiB.
@Suite struct AppHandlerSessionTests {
    @Test func sendsThePayloadThenReadsTheReportUntilExit() {
        var session = AppHandlerMachine(payload: ["a": 1], deadline: 1)
        #expect(session.observe(.launched(at: 0)) == [.write(Array(#"{"a":1}"#.utf8) + [0x0A]), .closeStdin])
        #expect(session.deadline == 1_000_000_000)
        #expect(session.observe(.line(Array("{".utf8), at: 1)) == [])
        #expect(session.observe(.stdoutClosed(unterminated: Array("}".utf8))) == [])
        #expect(session.phase == .exiting(until: 1_000_000_000))
        #expect(session.observe(.exited) == [.finish])
        #expect(session.phase == .answered && session.output == Array("{\n}".utf8))
    }

    @Test func noReportBeforeTheDeadlineFails() {
        var session = AppHandlerMachine(payload: [:], deadline: 0.5)
        _ = session.observe(.launched(at: 0))
        #expect(session.observe(.deadline(now: 500_000_000)) == [.kill, .finish])
        #expect(session.phase == .failed(AppLauncher.AppFailure("no report within 0.5 s")))
        // A report written in full but a process that does not leave: ended, the report stands.
        var slow = AppHandlerMachine(payload: [:], deadline: 0.5)
        _ = slow.observe(.launched(at: 0))
        _ = slow.observe(.stdoutClosed(unterminated: Array("{}".utf8)))
        #expect(slow.observe(.deadline(now: 500_000_000)) == [.kill, .finish])
        #expect(slow.phase == .answered && slow.output == Array("{}".utf8))
    }

    @Test func anOversizeReportFails() {
        var session = AppHandlerMachine(payload: [:], deadline: 1)
        _ = session.observe(.launched(at: 0))
        let half = [UInt8](repeating: 0x20, count: 40 * 1024)
        #expect(session.observe(.line(half, at: 1)) == [])
        #expect(session.observe(.line(half, at: 2)) == [.kill, .finish])
        #expect(session.phase == .failed(AppLauncher.AppFailure("report larger than 64 KiB")))
        var long = AppHandlerMachine(payload: [:], deadline: 1)
        _ = long.observe(.launched(at: 0))
        #expect(long.observe(.lineTooLong) == [.kill, .finish])
    }
}

/// The one framing of the protocol.
@Suite struct LineFramerTests {
    @Test func splitsLinesAcrossChunks() throws {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("ab".utf8))
        #expect(try framer.nextLine() == nil)
        framer.append(Array("c\nde\n\nf".utf8))
        #expect(try framer.nextLine() == Array("abc".utf8))
        #expect(try framer.nextLine() == Array("de".utf8))
        #expect(try framer.nextLine() == [])
        #expect(try framer.nextLine() == nil)
        #expect(framer.unterminated == Array("f".utf8) && !framer.hasLine)
        framer.append(Array("g\n".utf8))
        #expect(framer.hasLine)
        #expect(try framer.nextLine() == Array("fg".utf8))
    }

    @Test func refusesALineOverTheLimitWhetherOrNotItIsComplete() throws {
        var complete = LineFramer(maxLineBytes: 4)
        complete.append(Array("1234\n12345\n".utf8))
        #expect(try complete.nextLine() == Array("1234".utf8))
        #expect(throws: LineFramer.LineTooLong(maxLineBytes: 4)) { try complete.nextLine() }
        var partial = LineFramer(maxLineBytes: 4)
        partial.append(Array("1234".utf8))
        #expect(try partial.nextLine() == nil)
        partial.append(Array("5".utf8))
        #expect(throws: LineFramer.LineTooLong(maxLineBytes: 4)) { try partial.nextLine() }
    }

    @Test func longStreamsStayLinear() throws {
        var framer = LineFramer(maxLineBytes: 64)
        var count = 0
        for index in 0..<20_000 {
            framer.append(Array("line \(index)\n".utf8))
            while try framer.nextLine() != nil { count += 1 }
        }
        #expect(count == 20_000 && framer.unterminated.isEmpty)
    }
}
