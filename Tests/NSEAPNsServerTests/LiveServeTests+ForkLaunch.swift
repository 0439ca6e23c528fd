import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse serve --extension-launch fork`: each push's process forked by a fork server of the extension, not exec'd.
extension LiveServeTests {
    /// The processes the server has started and that still run: (pid, command name).
    static func children(of pid: Int32) -> [(pid: Int32, name: String)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }.map { child in
            let name = (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? ""
            return (child, name.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// What a process's descriptors point to, by number.
    static func descriptors(of pid: Int32) -> [String: String] {
        let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        var found: [String: String] = [:]
        for number in numbers {
            found[number] = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(number)")
        }
        return found
    }

    @Test func pushesRunInFreshProcessesForkedByOneServerOfTheExtension() async throws {
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension-launch", "fork", "--concurrency", "2",
        ])
        for _ in 0..<4 {
            #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        }
        let results = try await results(server.url, count: 4)
        #expect(results.count == 4)
        for result in results {
            #expect(result["outcome"] == "rewritten", "\(result)")
            #expect(result["extension"]?["exit"]?["code"] == 0, "\(result)")
            #expect(result["extension"]?["process"] == "fresh")
            // What wait4 said in the fork server, passed on.
            #expect((result["extension"]?["wait4_maxrss_kb"]?.intValue ?? 0) > 0, "\(result)")
        }
        // One process of the extension stays: the fork server, which holds only its link and its signal descriptor
        // beside /dev/null and the server's stderr (no file of its rehearsal, nothing a push's process would inherit).
        let forkServers = Self.children(of: server.process.processIdentifier).filter { $0.name == "nse-extension" }
        #expect(forkServers.count == 1, "\(Self.children(of: server.process.processIdentifier))")
        let forkServer = try #require(forkServers.first).pid
        let held = Self.descriptors(of: forkServer)
        #expect(held["0"] == "/dev/null" && held["1"] == "/dev/null", "\(held)")
        #expect(held["3"]?.hasPrefix("socket:") == true, "\(held)")
        let others = held.filter { !["0", "1", "2", "3"].contains($0.key) }
        #expect(others.count == 1 && others.values.allSatisfy { $0.contains("signalfd") }, "\(held)")
        #expect(server.stop() == 0)
        // Stopped with the server.
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(forkServer)/stat"))
    }

    /// A fork server that dies (killed from outside) is reaped and replaced by the next push, which is served.
    @Test func aForkServerThatDiesIsReplaced() async throws {
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension-launch", "fork",
        ])
        #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        #expect(try await results(server.url, count: 1).count == 1)
        let serving = Self.children(of: server.process.processIdentifier).filter { $0.name == "nse-extension" }
        let first = try #require(serving.first).pid
        kill(first, SIGKILL)
        // Dead, not yet reaped: the host reaps it when a push finds it gone.
        for _ in 0..<100 {
            let stat = (try? String(contentsOfFile: "/proc/\(first)/stat", encoding: .utf8)) ?? ""
            if stat.contains(") Z ") { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        let results = try await results(server.url, count: 3)
        #expect(results.count == 3)
        #expect(results.allSatisfy { $0["outcome"] == "rewritten" }, "\(results)")
        let now = Self.children(of: server.process.processIdentifier).filter { $0.name == "nse-extension" }
        #expect(now.count == 1 && now.first?.pid != first, "\(now)")
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(first)/stat"))
        #expect(server.stop() == 0)
    }

    /// A forked process is held to the memory limit as an exec'd one: killed by the host, the kill reported from
    /// the fork server's wait4.
    @Test func aForkedProcessOverTheMemoryLimitIsKilled() async throws {
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension-launch", "fork", "--memory-limit",
            "0.25",
        ])
        #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        let result = try #require(try await results(server.url, count: 1).first)
        #expect(server.stop() == 0)
        #expect(result["outcome"] == "original", "\(result)")
        #expect(result["extension"]?["killed"] == "memory", "\(result)")
        #expect(result["extension"]?["exit"]?["signal"] == 9, "\(result)")
    }

    /// An extension without a fork server (any program of the host/extension protocol) runs by exec, as without the
    /// option, and the server says so once.
    @Test func anExtensionWithoutAForkServerIsExecd() async throws {
        let script = root + "/upper.sh"
        try TestSupport.write(
            """
            #!/bin/sh
            read -r request || exit 0
            echo '{"type":"content","content":{"aps":{"alert":{"title":"Probe","body":"exec'"'"'d"}}}}'
            read -r accepted
            """, to: script)
        chmod(script, 0o755)
        let log = root + "/serve.log"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        let server = try CommandProcess(
            [
                "serve", "--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension", script,
                "--extension-launch", "fork",
            ], stderr: try #require(FileHandle(forWritingAtPath: log)), timeout: 60, what: "nse serve")
        #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        #expect(try await push(server.url, ["--http2-prior-knowledge"]).status == "200")
        let results = try await results(server.url, count: 2)
        #expect(server.stop(grace: 30).status == 0)
        #expect(results.count == 2)
        #expect(results.allSatisfy { $0["display"]?["body"] == "exec'd" }, "\(results)")
        let stderr = try String(contentsOfFile: log, encoding: .utf8)
        let warnings = stderr.split(separator: "\n").filter { $0.contains("extension processes exec'd") }
        #expect(warnings.count == 1, "\(stderr)")
    }
}
