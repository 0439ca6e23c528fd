import NSEJSON
import NSEProtocol

/// Protocol lines as `ExtensionChannel` (extension side) and `ExtensionProcess` (host side) read them: split at `\n`,
/// blank lines skipped, each line a JSON object (at most 40 deep) read as a host and as an extension message.
enum ExtensionProtocolTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(64) {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
            let json: JSON
            do { json = try JSON.parse(Array(line), options: JSONParseOptions(maxDepth: 40)) } catch {
                try FuzzCheck.oneLine(error.description, .extensionProtocol, "a line's JSON error")
                continue
            }
            do {
                let message = try HostMessage(json: json)
                guard FuzzCheck.sameDocument(try HostMessage(json: reparsed(message.json)).json, message.json) else {
                    throw FuzzFinding(.extensionProtocol, "a host message re-reads as a different message once written")
                }
            } catch let error as ProtocolError {
                try FuzzCheck.oneLine(error.description, .extensionProtocol, "a host message error")
            } catch let finding as FuzzFinding {
                throw finding
            } catch {
                throw FuzzFinding(.extensionProtocol, "a host message throws an unexpected error type")
            }
            do {
                let message = try ExtensionMessage(json: json)
                guard FuzzCheck.sameDocument(try ExtensionMessage(json: reparsed(message.json)).json, message.json)
                else {
                    throw FuzzFinding(
                        .extensionProtocol, "an extension message re-reads as a different message once written")
                }
            } catch let error as ProtocolError {
                try FuzzCheck.oneLine(error.description, .extensionProtocol, "an extension message error")
            } catch let finding as FuzzFinding {
                throw finding
            } catch {
                throw FuzzFinding(.extensionProtocol, "an extension message throws an unexpected error type")
            }
        }
    }

    /// A message as the other side reads it: written as one line, then parsed with the same options.
    static func reparsed(_ json: JSON) throws(FuzzFinding) -> JSON {
        let line = json.serializedBytes()
        guard !line.contains(0x0A) else {
            throw FuzzFinding(.extensionProtocol, "a message is written with a line break inside its line")
        }
        guard line.count <= ExtensionProtocol.maxLineBytes + 1024 else { return json }
        do { return try JSON.parse(line, options: JSONParseOptions(maxDepth: 40)) } catch {
            throw FuzzFinding(.extensionProtocol, "a written message does not parse (\(error.code.rawValue))")
        }
    }
}
