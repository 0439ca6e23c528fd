import Logging
import NSEHost

/// Why devices were not given back: the status for the node that asked, and one line.
public struct HandbackFailure: Error, Sendable, CustomStringConvertible {
    /// 409: they are not this node's to give (its own, or never taken over); 500: the fleet's database failed.
    public var status: Int
    public var description: String
}

extension PushService {
    /// Lets the locks of every folder taken over go: the server has stopped and is done with them
    /// (``ServeLock/release()``).
    public func releaseAdoptedLocks() {
        adopted.releaseAll()
    }

    /// Gives `paths` (folders and device folders this node took over, as the fleet's rows name them) back to `node`,
    /// the node that served them and is starting again (docs/serve.md, "Coming back"), and returns how many
    /// devices went. The fleet's rows move first, so that a push for them reaching any node goes on to `node` (and
    /// waits for it to listen); then nothing new starts for them here: a push this node answered 200 and has not
    /// run stays in its row, for `node` to run as one a previous run left unrun. What had started ends first: their
    /// locks are released last, once nothing of theirs runs here.
    public func handBack(_ paths: Set<String>, to node: String) async throws(HandbackFailure) -> Int {
        guard let fleet else { throw HandbackFailure(status: 409, description: "this node is in no fleet") }
        let units: [AdoptedDevices.Unit]
        switch adopted.take(paths) {
        case .success(let taken): units = taken
        case .failure(let notTaken):
            throw HandbackFailure(
                status: 409,
                description: "\(notTaken.paths.joined(separator: ", ")): not taken over by node \(fleet.node)")
        }
        let directories = Set(units.flatMap(\.directories))
        do {
            try await fleet.handBack(
                tokens: devices.tokens(of: directories), folders: units.filter(\.isFolder).map(\.path),
                devices: units.filter { !$0.isFolder }.map(\.path), to: node)
        } catch {
            adopted.add(units)
            throw HandbackFailure(status: 500, description: error.description)
        }
        activity.leave(directories)
        devices.remove(directories: directories)
        offline.forget(directories)
        await activity.idle(directories)
        extensionProcesses?.evict(containers: directories)
        store.close(directories: directories)
        logger.notice(
            "gave devices back to the node that served them",
            metadata: ["fleet.node": .string(node), "device.count": .stringConvertible(directories.count)])
        // The locks go with the units, now.
        withExtendedLifetime(units) {}
        return directories.count
    }
}
