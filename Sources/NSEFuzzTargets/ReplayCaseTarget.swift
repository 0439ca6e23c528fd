import NSEDevice
import NSEJSON
import NSEReplay

/// A replay case file as `nse replay` reads it, recorded (`nse serve --record`) or written by hand: any bytes give a
/// case or one error line naming the file, and an accepted case reads back from its own document to the same case.
enum ReplayCaseTarget {
    static let file = "/fuzz/case.json"

    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        let parsed: ReplayCase
        do { parsed = try ReplayCase.parse(bytes, file: file) } catch {
            try FuzzCheck.oneLine(error.description, .replayCase, "a case error")
            guard error.description.hasPrefix(file + ":") else {
                throw FuzzFinding(.replayCase, "a case error does not name its file")
            }
            return
        }
        let again: ReplayCase
        do { again = try ReplayCase.parse(Array(JSON.object(parsed.document).serialized().utf8), file: file) } catch {
            throw FuzzFinding(.replayCase, "an accepted case is refused once written back")
        }
        guard again.name == parsed.name, again.steps.count == parsed.steps.count,
            again.pushes.map(\.expect.count) == parsed.pushes.map(\.expect.count),
            again.appGroup.held.map(\.callID) == parsed.appGroup.held.map(\.callID),
            again.appGroup.held.map(\.body) == parsed.appGroup.held.map(\.body)
        else { throw FuzzFinding(.replayCase, "an accepted case reads back as another case") }
    }
}
