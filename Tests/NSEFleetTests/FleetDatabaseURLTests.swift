import NSEAPNsServer
import NSEFleet
import Testing

@Suite struct FleetDatabaseURLTests {
    @Test func parsesTheFormsPsqlTakes() throws {
        let full = try FleetDatabaseURL("postgres://nse:p%40ss@db.example:6543/fleet?sslmode=disable")
        #expect(full.user == "nse" && full.password == "p@ss" && full.host == "db.example")
        #expect(full.port == 6543 && full.database == "fleet")
        #expect(full.description == "postgres://nse:(redacted)@db.example:6543/fleet")
        let short = try FleetDatabaseURL("postgresql://nse@[::1]/fleet")
        #expect(short.host == "::1" && short.port == 5432 && short.password == nil)
        #expect(short.description == "postgres://nse@[::1]:5432/fleet")
    }

    @Test(arguments: [
        ("http://nse@h/db", "expected postgres://"), ("postgres://nse@h:99999/db", "port"),
        ("postgres://h:5432/db", "no user"), ("postgres://nse@h:5432", "no database"),
        ("postgres://nse@:5432/db", "no host"), ("postgres://nse@h/db?sslmode=require", "sslmode"),
        ("postgres://nse:hunter2@h:x/db", "port"),
    ])
    func refusesWithOneLine(text: String, says: String) {
        #expect {
            try FleetDatabaseURL(text)
        } throws: { error in
            let description = (error as? FleetError)?.description ?? ""
            return description.contains(says) && !description.contains("hunter2") && !description.contains("\n")
        }
    }
}
