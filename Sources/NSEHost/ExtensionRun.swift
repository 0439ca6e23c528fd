#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NSEJSON
import NSEPayload
import NSESystem

/// The limits iOS puts on one extension run.
public struct ExtensionLimits: Sendable {
    /// Time from launch to `serviceExtensionTimeWillExpire`, in seconds (iOS: about 30).
    public var budget: Double
    /// Time after the expiry notice before the process is killed, in seconds.
    public var grace: Double
    /// Peak resident memory allowed, in kilobytes (iOS's jetsam limit for NSEs: 24 MB).
    public var memoryLimitKilobytes: Int

    public init(budget: Double = 30, grace: Double = 1, memoryLimitKilobytes: Int = 24 * 1024) {
        self.budget = budget
        self.grace = grace
        self.memoryLimitKilobytes = memoryLimitKilobytes
    }
}

/// What happened to one extension process.
struct ExtensionRun {
    enum Termination: Equatable {
        /// Exited or was stopped after delivering (or without delivering) on its own.
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

    var delivered: DeliveredContent?
    var deliveredAfterExpiry = false
    var expirySent = false
    var termination: Termination = .exited
    var exitCode: Int32?
    var exitSignal: Int32?
    var wallMilliseconds: Double = 0
    /// Highest VmHWM sampled while it ran.
    var peakRSSKilobytes: Int?
    /// What wait4 reported (includes the host's own high-water mark; see above).
    var wait4MaxRSSKilobytes: Int?
    var stderrTail: String = ""
    /// The payload the extension reported with `reportNewIncomingVoIPPushPayload`, when the host accepted it.
    var acceptedVoIPPayload: JSONObject?
    /// The error the host answered a VoIP report with, if any.
    var voipError: VoIPReportError?
    var voipReported = false

    /// Runs one extension process for `request` under `limits`.
    /// - Parameter reportVoIP: answers `reportNewIncomingVoIPPushPayload` (nil = accepted).
    static func run(
        command: [String], request: ServiceRequest, limits: ExtensionLimits,
        reportVoIP: (JSONObject, _ alreadyReported: Bool) -> VoIPReportError?
    ) -> ExtensionRun {
        var run = ExtensionRun()
        let start = Clock.monotonicNanoseconds()
        let child: ChildProcess
        do { child = try ChildProcess.spawn(command) } catch {
            run.termination = .spawnFailed(error.description)
            return run
        }
        child.writeStdin(HostMessage.request(request).json.serializedBytes() + [0x0A])

        let budgetEnd = start + UInt64(max(limits.budget, 0) * 1e9)
        var killAt: UInt64?
        var stdoutBuffer: [UInt8] = []
        var stderrBuffer: [UInt8] = []
        var stdoutOpen = true
        var stderrOpen = true
        var pollInterval: Int32 = 2
        var lingerUntil: UInt64?

        // Peak memory is sampled from /proc (VmHWM of the extension's own address space). wait4's ru_maxrss is not
        // usable: Linux carries the spawning process's high-water mark across exec, so it reports the host's size.
        var peakSeen = 0
        var exitWait: UInt32 = 50
        func samplePeak() -> Int? {
            guard let peak = child.peakRSSKilobytes() else { return nil }
            peakSeen = max(peakSeen, peak)
            return peak
        }

        func kill(_ reason: Termination) {
            child.signalGroup(SIGKILL)
            run.termination = reason
        }

        loop: while true {
            let now = Clock.monotonicNanoseconds()
            // The memory limit, checked like jetsam: on the peak, at every wake-up (not once the process is leaving).
            if stdoutOpen || stderrOpen, let peak = samplePeak(), peak > limits.memoryLimitKilobytes {
                kill(.memory(peakKilobytes: peak))
                break
            }
            if run.delivered == nil {
                if !run.expirySent && now >= budgetEnd {
                    child.writeStdin(HostMessage.timeWillExpire.json.serializedBytes() + [0x0A])
                    run.expirySent = true
                    killAt = now + UInt64(max(limits.grace, 0) * 1e9)
                }
                if let killAt, now >= killAt {
                    kill(.budget)
                    break
                }
            } else if let lingerUntil, now >= lingerUntil {
                // Delivered but still running: iOS may keep it; nse ends it so every notification gets a fresh one.
                child.signalGroup(SIGKILL)
                break
            }
            if !stdoutOpen && !stderrOpen {
                // Both pipes closed: the process is exiting (or detached from them); reap it as soon as it has.
                if child.reap(blocking: false) != nil { break }
                usleep(exitWait)
                exitWait = min(exitWait * 2, 2000)
                continue
            }
            var descriptors: [pollfd] = []
            if stdoutOpen { descriptors.append(pollfd(fd: child.stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if stderrOpen { descriptors.append(pollfd(fd: child.stderrFD, events: Int16(POLLIN), revents: 0)) }
            let deadline = lingerUntil ?? killAt ?? budgetEnd
            let untilDeadline = deadline > now ? Int32(min((deadline - now) / 1_000_000 + 1, 1000)) : 0
            let timeout = min(untilDeadline, pollInterval)
            pollInterval = min(pollInterval * 2, 20)
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            for descriptor in descriptors where descriptor.revents != 0 {
                let isStdout = descriptor.fd == child.stdoutFD
                var chunk = [UInt8](repeating: 0, count: 16 * 1024)
                let count = chunk.withUnsafeMutableBytes { read(descriptor.fd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                if count <= 0 {
                    if isStdout { stdoutOpen = false } else { stderrOpen = false }
                    continue
                }
                if isStdout {
                    stdoutBuffer.append(contentsOf: chunk[0..<count])
                } else {
                    stderrBuffer.append(contentsOf: chunk[0..<count])
                    if stderrBuffer.count > 8192 { stderrBuffer.removeFirst(stderrBuffer.count - 8192) }
                }
            }
            while run.delivered == nil, let newline = stdoutBuffer.firstIndex(of: 0x0A) {
                let line = Array(stdoutBuffer[..<newline])
                stdoutBuffer.removeSubrange(...newline)
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
                do {
                    let json = try JSON.parse(line, options: JSONParseOptions(maxDepth: 40))
                    let message = try ExtensionMessage(json: json)
                    if case .reportVoIP(let payload) = message {
                        let error = reportVoIP(payload, run.voipReported)
                        if error == nil { run.acceptedVoIPPayload = payload }
                        run.voipReported = true
                        run.voipError = error
                        child.writeStdin(HostMessage.reportVoIPResult(error).json.serializedBytes() + [0x0A])
                        continue
                    }
                    guard case .content(let content) = message else { continue }
                    // The extension waits for end-of-file on stdin before exiting (docs/protocol.md), so its
                    // address space is still there to measure.
                    if let peak = samplePeak(), peak > limits.memoryLimitKilobytes {
                        kill(.memory(peakKilobytes: peak))
                        break loop
                    }
                    run.delivered = content
                    run.deliveredAfterExpiry = run.expirySent
                    child.closeStdin()
                    lingerUntil = Clock.monotonicNanoseconds() + 250_000_000
                } catch let error as JSONError {
                    kill(.protocolViolation("the extension wrote a line that is not JSON: \(error.description)"))
                    break loop
                } catch {
                    kill(.protocolViolation("\(error)"))
                    break loop
                }
            }
            if run.delivered == nil, stdoutBuffer.count > ExtensionProtocol.maxLineBytes {
                kill(.protocolViolation("the extension wrote a line longer than \(ExtensionProtocol.maxLineBytes) bytes"))
                break
            }
        }
        child.closeStdin()
        let exit = child.reap(blocking: true)
        run.wallMilliseconds = Clock.millisecondsSince(start)
        run.exitCode = exit?.exitCode
        run.exitSignal = exit?.signal
        run.peakRSSKilobytes = peakSeen > 0 ? peakSeen : nil
        run.wait4MaxRSSKilobytes = exit?.peakRSSKilobytes
        run.stderrTail = String(decoding: stderrBuffer.suffix(2048), as: UTF8.self)
        return run
    }
}
