import Synchronization

/// What this node took over from stopped nodes of its fleet, a folder (or `--device` folder) at a time, each with
/// its lock: what it may give back when the node that served it starts again (docs/serve.md, "Coming back"). The
/// node's own `--devices` and `--device` are not here: they are never given away.
final class AdoptedDevices: Sendable {
    /// One folder taken over.
    struct Unit: Sendable {
        /// The folder as the stopped node named it (absolute, links resolved): a `--devices` folder, or a device's.
        let path: String
        let isFolder: Bool
        /// The device folders served from it.
        let directories: [String]
        /// Its lock, released when the unit is dropped (given back).
        let lock: ServeLock
    }

    private let units = Mutex<[Unit]>([])

    /// Units taken over, or put back after ``take(_:)`` when their handback failed.
    func add(_ taken: [Unit]) {
        units.withLock { $0 += taken }
    }

    /// Takes out the units named by `paths`, or none and the paths that are not among them.
    func take(_ paths: Set<String>) -> Result<[Unit], NotTaken> {
        units.withLock { units in
            let missing = paths.subtracting(units.map(\.path))
            guard missing.isEmpty else { return .failure(NotTaken(paths: missing.sorted())) }
            let taken = units.filter { paths.contains($0.path) }
            units.removeAll { paths.contains($0.path) }
            return .success(taken)
        }
    }

    /// Lets every unit's lock go: the node is done with them and stops (``ServeLock/release()``).
    func releaseAll() {
        for unit in units.withLock({ $0 }) { unit.lock.release() }
    }

    /// Paths this node did not take over.
    struct NotTaken: Error, Sendable {
        let paths: [String]
    }
}
