import NSESIP

/// A chat room's documents as NSESIP reads them: RFC 4826 resource lists (an invitation's participants) and
/// RFC 4575 conference-info (a room's state in a NOTIFY, which the extension parses too).
enum ConferenceTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        do {
            let list = try SIPResourceList(parsing: bytes)
            // Written back, the list reads as the same addresses.
            guard let again = try? SIPResourceList(parsing: list.serialized()),
                again.uris.map(\.description) == list.uris.map(\.description)
            else {
                throw FuzzFinding(.conference, "a parsed resource list does not read back as written")
            }
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            try FuzzCheck.oneLine("\(error)", .conference, "a resource-lists error")
        }
        do {
            let info = try SIPConferenceInfo(parsing: bytes)
            guard let again = try? SIPConferenceInfo(parsing: info.serialized()), again == info else {
                throw FuzzFinding(.conference, "a parsed conference-info does not read back as written")
            }
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            try FuzzCheck.oneLine("\(error)", .conference, "a conference-info error")
        }
    }
}
