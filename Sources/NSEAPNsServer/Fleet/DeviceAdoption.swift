import NIOPosix
import NSEDevice
import NSEJSON
import NSESystem

/// A fleet's node taking over the devices of a node that stopped (docs/serve.md, "A fleet on PostgreSQL"): their
/// locks taken as the stopped node's were (``ServeLock``, a folder at a time: held until this server exits or gives
/// the folder back, ``PushService/handBack(_:to:)``), their devices served from now on, the pushes it answered 200
/// and left unrun queued again as at a restart, and the results it recorded but had not copied to the fleet copied.
public struct DeviceAdoption: Sendable {
    /// Why the devices could not be taken over: one line.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The devices taken over: (remote token, voip token) each.
    public let tokens: [(remote: String, voip: String)]
    /// Pushes queued again.
    public let resumed: Int
}

extension PushService {
    /// Takes over `folders` (`--devices` folders) and `devices` (`--device` folders) that another node served.
    /// - Parameter copied: for each device (its remote token), the last of its result rows the fleet has a copy of;
    ///   every later result is copied now.
    /// - Throws: ``DeviceAdoption/Failure`` when a folder cannot be read here, or another server still holds its lock
    ///   (the node is not dead after all): nothing is taken then.
    public func adopt(
        folders: [String], devices paths: [String], copied: @Sendable ([String]) async -> [String: Int64]
    ) async throws(DeviceAdoption.Failure) -> DeviceAdoption {
        // Folders, locks and databases are files: read on the store's threads, never a cooperative one.
        let taken: Taken
        do {
            taken = try await storeThreads.runIfActive { [self] in try take(folders: folders, devices: paths) }
        } catch let failure as DeviceAdoption.Failure {
            throw failure
        } catch {
            throw DeviceAdoption.Failure(description: "devices not taken over: \(error)")
        }
        // Served from now on: read after what the stopped node left unrun, so no push of this node counts as that.
        // (Devices given back once and taken over again run their pushes here again.)
        adopted.add(taken.units)
        activity.stay(taken.units.flatMap(\.directories))
        let added = devices.add(taken.entries)
        offline.adopt(offline: added.filter { !$0.online }.map(\.directory))
        if fleet != nil {
            let through = await copied(taken.used.map { $0.config.remoteToken.lowercased() })
            _ = try? await storeThreads.runIfActive { [self] in copyMissing(taken.used, through: through) }
        }
        let resumed = taken.unfinished.resume(queue: queue, offline: offline, runner: runner)
        return DeviceAdoption(tokens: added.map { ($0.remoteToken, $0.voipToken) }, resumed: resumed)
    }

    /// What ``take(folders:devices:)`` found and holds.
    private struct Taken: Sendable {
        /// The folders taken, each with its lock.
        let units: [AdoptedDevices.Unit]
        let entries: [DeviceFolder.Entry]
        /// The devices with a results database.
        let used: [Device]
        let unfinished: UnfinishedPushes
    }

    /// Scans and locks the folders (those served here already are left out) and reads what was left unrun.
    private func take(folders: [String], devices paths: [String]) throws(DeviceAdoption.Failure) -> Taken {
        var entries: [DeviceFolder.Entry] = []
        var scanned: [(folder: String, devices: [String])] = []
        for folder in folders {
            do {
                // A folder served here already (this node's own, or taken over before) is left as it is.
                let found = try DeviceFolder.scan(folder).entries
                guard !found.contains(where: { devices.serves(directory: $0.directory) }) else { continue }
                entries += found
                scanned.append((folder, found.map(\.directory)))
            } catch {
                throw DeviceAdoption.Failure(description: "--devices \(folder): \(error.description)")
            }
        }
        var opened: [Device] = []
        for path in paths where !devices.serves(directory: path) {
            do { opened.append(try Device.open(at: path)) } catch {
                throw DeviceAdoption.Failure(description: "device \(path): \(error.description)")
            }
        }
        // A lock a folder, so that one folder can be given back; all or none (those taken go with `units`).
        var units: [AdoptedDevices.Unit] = []
        do throws(ServeLock.Busy) {
            for (folder, members) in scanned {
                units.append(
                    AdoptedDevices.Unit(
                        path: FileSystem.resolvedPath(folder) ?? folder, isFolder: true, directories: members,
                        lock: try ServeLock.acquire(devices: [], folders: [(folder, members)])))
            }
            for device in opened {
                units.append(
                    AdoptedDevices.Unit(
                        path: FileSystem.resolvedPath(device.directory) ?? device.directory, isFolder: false,
                        directories: [device.directory],
                        lock: try ServeLock.acquire(devices: [device.directory], folders: [])))
            }
        } catch {
            throw DeviceAdoption.Failure(description: error.description)
        }
        // The folders' devices' rows are in the folders' databases, as on the node that served them.
        store.serve(folders: entries.map { Path.dirname($0.directory) })
        var used = opened.filter { store.mayHaveRows(directory: $0.directory) }
        for entry in entries where store.mayHaveRows(directory: entry.directory) {
            if let device = try? Device.open(at: entry.directory) { used.append(device) }
        }
        entries += opened.map {
            DeviceFolder.Entry(
                directory: $0.directory, remoteToken: $0.config.remoteToken.lowercased(),
                voipToken: $0.config.voipToken.lowercased(), online: $0.config.online)
        }
        return Taken(
            units: units, entries: entries, used: used,
            unfinished: UnfinishedPushes(devices: used, store: store, logger: logger))
    }

    /// Copies to the fleet each result of `used` after the last row it has (`through`), oldest first.
    private func copyMissing(_ used: [Device], through: [String: Int64]) {
        guard let fleet else { return }
        for device in used {
            let token = device.config.remoteToken.lowercased()
            var missing: [JSON] = []
            var before = Int64.max
            while let page = try? store.results(
                for: device, limit: ResultStore.pageRows, since: through[token] ?? 0, before: before),
                let last = page.last?["id"]?.intValue
            {
                missing += page
                before = last
            }
            for result in missing.reversed() {
                guard var object = result.objectValue, let row = object["id"]?.intValue else { continue }
                object["id"] = nil
                object["acknowledged"] = nil
                fleet.copyResult(
                    .object(object), row: row, device: token, apnsID: object["apns_id"]?.stringValue ?? "")
            }
        }
    }
}
