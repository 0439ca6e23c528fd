import Foundation
import NSETestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A throw-away PostgreSQL cluster for one test: `initdb` (trust authentication, user `nse`) in a temporary folder,
/// started by `pg_ctl` on a free loopback port with its socket in that folder, stopped by its postmaster's PID.
/// As root (CI, this machine) PostgreSQL refuses to run, so the cluster is made and run as the `postgres` user
/// Debian's package creates (else `nobody`), through `runuser`.
final class PostgresCluster: @unchecked Sendable {
    /// The folder holding `initdb` and `pg_ctl`: on PATH, else Debian's `/usr/lib/postgresql/VERSION/bin`
    /// (the newest); nil when PostgreSQL is not installed (`apt-get install postgresql`).
    static let binaries: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init)
        where FileManager.default.isExecutableFile(atPath: folder + "/initdb")
            && FileManager.default.isExecutableFile(atPath: folder + "/pg_ctl")
        {
            // Its real folder (a link on PATH may point into Debian's), where psql is too.
            return URL(fileURLWithPath: folder + "/initdb").resolvingSymlinksInPath().deletingLastPathComponent().path
        }
        let debian = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? []).compactMap(Int.init)
        for version in versions.sorted(by: >)
        where FileManager.default.isExecutableFile(
            atPath: "\(debian)/\(version)/bin/initdb")
        {
            return "\(debian)/\(version)/bin"
        }
        return nil
    }()

    static let missing = "PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql): skipped"

    let folder: String
    let port: Int
    /// `postgres://nse@127.0.0.1:PORT/postgres`.
    var url: String { "postgres://nse@127.0.0.1:\(port)/postgres" }
    private var postmaster: pid_t?

    /// Makes and starts the cluster (a few seconds); throws with PostgreSQL's own log when it cannot.
    init() throws {
        guard let binaries = Self.binaries else { throw TestSupport.SetupError(description: Self.missing) }
        folder = try TestSupport.temporaryDirectory("nse-postgres")
        let owner = getuid() == 0 ? (getpwnam("postgres") ?? getpwnam("nobody")) : nil
        if let owner {
            guard chown(folder, owner.pointee.pw_uid, owner.pointee.pw_gid) == 0 else {
                throw TestSupport.SetupError(description: "chown \(folder): errno \(errno)")
            }
        }
        let user = owner.map { String(cString: $0.pointee.pw_name) }
        let folder = folder
        func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
            let command = [binaries + "/" + tool] + arguments
            let outputPath = folder + "/\(tool).out"
            let status = try Self.spawnAndWait(
                user.map { ["/usr/sbin/runuser", "-u", $0, "--"] + command } ?? command, output: outputPath)
            return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
        }
        let data = folder + "/data"
        let made = try run("initdb", ["-D", data, "-A", "trust", "-U", "nse", "--no-sync", "-E", "UTF8"])
        guard made.status == 0 else { throw TestSupport.SetupError(description: "initdb: \(made.output)") }
        var started: (port: Int, output: (status: Int32, output: String))?
        for _ in 0..<3 {
            let port = try Self.freePort()
            let options =
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(folder) -c fsync=off -c synchronous_commit=off"
            let output = try run(
                "pg_ctl", ["start", "-D", data, "-l", folder + "/log", "-w", "-t", "30", "-o", options])
            started = (port, output)
            if output.status == 0 { break }
        }
        guard let started, started.output.status == 0 else {
            let log = (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? ""
            throw TestSupport.SetupError(description: "pg_ctl start: \(started?.output.output ?? "") \(log)")
        }
        port = started.port
        let pidLine = (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8))?
            .split(separator: "\n").first
        postmaster = pidLine.flatMap { pid_t($0) }
    }

    deinit { stop() }

    /// Fast shutdown (SIGINT to the postmaster), then SIGKILL after 10 s; waits until it is gone.
    func stop() {
        guard let pid = postmaster else { return }
        postmaster = nil
        kill(pid, SIGINT)
        for _ in 0..<200 where kill(pid, 0) == 0 { usleep(50_000) }
        if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }

    /// Runs one SQL statement with the cluster's `psql`; its unaligned output, trimmed.
    /// Stops (SIGSTOP) or resumes (SIGCONT) the postmaster and its backends: a database that no longer answers, its
    /// connections still open.
    func freeze(_ frozen: Bool) {
        guard let postmaster else { return }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            // "PID (COMMAND) STATE PPID …": the parent is the second field after the command's parenthesis.
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 1,
                pid_t(fields[1]) == postmaster
            else { continue }
            pids.append(pid)
        }
        for pid in pids { kill(pid, frozen ? SIGSTOP : SIGCONT) }
    }

    func psql(_ sql: String) throws -> String {
        let output = try TestSupport.run(
            (Self.binaries ?? "") + "/psql",
            ["-h", "127.0.0.1", "-p", String(port), "-U", "nse", "-d", "postgres", "-At", "-c", sql], timeout: 30)
        guard output.status == 0 else { throw TestSupport.SetupError(description: "psql: \(output.stderr)") }
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `command` with its output to a file and waits (60 s at most) with waitpid. Not Foundation's `Process`
    /// nor a pipe: the postmaster pg_ctl leaves running inherits their descriptors, and a wait for their end (which
    /// is how `Process` sees an exit) would last as long as the cluster.
    static func spawnAndWait(_ command: [String], output: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &arguments, environ)
        guard spawned == 0 else { throw TestSupport.SetupError(description: "\(command[0]): errno \(spawned)") }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(60)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw TestSupport.SetupError(description: "\(command.joined(separator: " ")): no exit in 60 s")
            }
            usleep(20_000)
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// A loopback port nothing listens on now (the kernel's pick for a socket bound to port 0).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupport.SetupError(description: "socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw TestSupport.SetupError(description: "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
