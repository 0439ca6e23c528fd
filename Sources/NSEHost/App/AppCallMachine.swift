import NSEJSON

/// The app's process for one call (`nse-app`), as a state machine the ``ProcessDriver`` feeds: the request goes
/// to its stdin as one line, then end of file; each line it prints is a step of the call, timed as it is read,
/// until its outcome line and its exit; past the deadline it is killed and the call recorded as not ended.
struct AppCallMachine {
    enum Phase: Equatable {
        case launching
        /// Following the call until `until`.
        case following(until: UInt64)
        /// It printed its outcome (or closed stdout); it has until `until` to exit.
        case exiting(until: UInt64)
        case done
        case failed(String)
    }

    /// The longest line read.
    static let maxLineBytes = 16 * 1024

    let request: JSON
    /// Seconds from launch to the end of the call, at most.
    let bound: Double
    private(set) var phase: Phase = .launching
    /// The steps it printed, with the monotonic time each was read.
    private(set) var steps: [(step: String, at: UInt64)] = []
    /// Its outcome line's object.
    private(set) var outcome: JSONObject?
    /// The problem it reported instead (`{"error": …}`).
    private(set) var error: String?

    init(request: JSON, bound: Double) {
        self.request = request
        self.bound = bound
    }

    private mutating func read(_ line: [UInt8], at: UInt64) -> [ProcessAction] {
        guard let object = (try? JSON.parse(line, options: JSONParseOptions(maxDepth: 8)))?.objectValue else {
            return []
        }
        if let step = object["step"]?.stringValue {
            steps.append((step, at))
        } else if let summary = object["outcome"]?.objectValue {
            outcome = summary
            phase = .exiting(until: at + ExtensionLimits.nanoseconds(1))
        } else if let problem = object["error"]?.stringValue {
            error = problem
        }
        return []
    }
}

extension AppCallMachine: ProcessMachine {
    var deadline: UInt64? {
        switch phase {
        case .following(let until), .exiting(let until): until
        case .launching, .done, .failed: nil
        }
    }

    var samplesMemory: Bool { false }

    /// A call can last minutes: when the host stops, the app is asked to end it now.
    var endsOnShutdown: Bool { true }

    mutating func observe(_ observation: ProcessObservation) -> [ProcessAction] {
        switch (phase, observation) {
        case (.done, _), (.failed, _):
            return []
        case (.launching, .launched(let at)):
            phase = .following(until: at + ExtensionLimits.nanoseconds(bound))
            return [.write(request.serializedBytes() + [0x0A]), .closeStdin]
        case (_, .launchFailed(let message)):
            phase = .failed("the app's process could not start: \(message)")
            return [.finish]
        case (.following, .line(let line, let at)), (.exiting, .line(let line, let at)):
            return read(line, at: at)
        case (_, .lineTooLong):
            phase = .failed("the app's process wrote a line longer than 16 KiB")
            return [.kill, .finish]
        case (.following(let until), .stdoutClosed):
            phase = .exiting(until: until)
            return []
        case (.following, .hostStopping(let at)):
            // The phone is shutting down: the app ends the call (a BYE, or a final answer) and exits; 2 s at most.
            phase = .following(until: at + ExtensionLimits.nanoseconds(2))
            return [.terminate]
        case (.following, .deadline):
            phase = .failed("the app's process did not end the call within \(Int(bound)) s")
            return [.kill, .finish]
        case (.exiting, .deadline):
            phase = .done
            return [.kill, .finish]
        case (_, .exited):
            phase = outcome != nil ? .done : .failed(error ?? "the app's process exited without ending the call")
            return [.finish]
        case (.launching, _), (.following, _), (.exiting, _):
            return []
        }
    }
}
