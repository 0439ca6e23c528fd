import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// The exit statuses docs/cli.md gives for a SIP peer's refusals and a `--db` that is a file (issue #39, defect 6).
@Suite(.serialized) struct DocumentedStatusTests {
    @Test func sipRefusalsAndABadDatabaseFolderHaveTheirDocumentedStatus() throws {
        let root = try TestSupport.temporaryDirectory("nse-statuses")
        try TestSupport.write("bob:secret\n", to: root + "/users.txt")
        let server = try SIPServerProcess([
            "--listen", "tcp:127.0.0.1:0", "--no-push", "--db", root + "/held", "--users", root + "/users.txt",
            "--realm", "example.org",
        ])
        let proxy = try #require(server.uris["tcp"])
        // An unknown user: 404, a final answer other than 2xx: 1.
        let send = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:nobody@example.org", "--text",
            "hi",
        ])
        #expect(send.status == 1, "\(send.stderr)")
        #expect(try JSON.parse(send.stdout)["status"] == 404)
        // A wrong password: 403: 74, the answer printed and named.
        try TestSupport.write("wrong", to: root + "/password")
        chmod(root + "/password", 0o600)
        let device = root + "/bob"
        let created = try TestSupport.nse([
            "device", "init", device, "--sip-account", "sip:bob@example.org", "--sip-password-file",
            root + "/password", "--sip-proxy", proxy,
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let register = try TestSupport.nse(["device", "register", device])
        #expect(register.status == 74, "\(register.stderr)")
        #expect(register.stderr == "nse: the registrar answered 403 Forbidden\n")
        #expect(try JSON.parse(register.stdout)["status"] == 403)
        server.stop()
        // --db naming a file: 78, a configuration problem.
        try TestSupport.write("", to: root + "/a-file")
        let database = try TestSupport.nse([
            "sip-server", "--no-push", "--listen", "tcp:127.0.0.1:0", "--db", root + "/a-file",
        ])
        #expect(database.status == 78, "\(database.stderr)")
        #expect(database.stderr.contains("exists and is not a directory"))
    }
}
