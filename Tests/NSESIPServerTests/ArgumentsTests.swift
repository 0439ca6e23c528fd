import NSESIP
import NSESIPServer
import Testing

@Suite("CLI arguments")
struct ArgumentsTests {
    @Test func parsesListenersAndKnobs() throws {
        let c = try SIPServerConfiguration(arguments: [
            "--listen", "udp:127.0.0.1:0", "--listen", "tls:[::1]:5061", "--tls-cert", "c.pem", "--tls-key", "k.pem",
            "--db", "/tmp/db", "--users", "/tmp/users", "--accept-timeout", "2", "--push-url", "http://127.0.0.1:9",
            "--deliver-duplicates", "--drop-first-packets", "3", "--auth-algorithms", "MD5",
        ])
        #expect(c.listeners == [SIPServerConfiguration.Listener(transport: .udp, host: "127.0.0.1", port: 0),
                                SIPServerConfiguration.Listener(transport: .tls, host: "::1", port: 5061)])
        #expect(c.tls == SIPServerConfiguration.TLSFiles(certificatePath: "c.pem", keyPath: "k.pem"))
        #expect(c.databaseDirectory == "/tmp/db")
        #expect(c.messageAcceptTimeout == .seconds(2))
        #expect(c.push.apnsURL == "http://127.0.0.1:9" && c.push.apnsDevelopmentURL == "http://127.0.0.1:9")
        #expect(c.faults.deliverDuplicates && c.faults.dropFirstPackets == 3)
        #expect(c.authAlgorithms == [.md5])
        #expect(throws: (any Error).self) { try SIPServerConfiguration(arguments: ["--listen", "tls:127.0.0.1:0"]) }
        #expect(throws: (any Error).self) { try SIPServerConfiguration(arguments: ["--bogus"]) }
    }
}
