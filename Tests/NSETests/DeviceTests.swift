import Foundation
import NSECrypto
import NSEDevice
import NSEJSON
import NSEPayload
import NSETestSupport
import Testing

@Suite struct DeviceTests {
    @Test func createsAContainer() throws {
        let directory = try TestSupport.temporaryDirectory() + "/bob"
        var options = Device.Options()
        options.bundleID = "org.linphone.phone"
        options.teamID = "Z2V957B3D6"
        options.filtering = true
        options.locale = "fr-FR"
        let device = try Device.create(at: directory, options: options)
        #expect(device.config.bundleID == "org.linphone.phone" && device.config.filtering)
        #expect(device.config.remoteToken.count == 64 && device.config.voipToken.count == 64)
        #expect(device.config.remoteToken != device.config.voipToken)
        let key = try device.secretKey()
        #expect(try key.publicKey() == device.publicKey())
        #expect(try device.publicKey().keyID == device.config.keyID)
        let mode = try FileManager.default.attributesOfItem(atPath: device.secretKeyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        for folder in [device.locksDirectory, device.logsDirectory, device.appGroupPath] {
            #expect(FileManager.default.fileExists(atPath: folder))
        }
        let reopened = try Device.open(at: directory)
        #expect(reopened.config == device.config)
        #expect(throws: DeviceError.self) { try Device.create(at: directory) }
    }

    @Test func refusesAReadableKey() throws {
        let device = try Device.create(at: try TestSupport.temporaryDirectory() + "/d")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: device.secretKeyPath)
        do {
            _ = try device.secretKey()
            Issue.record("accepted a 0644 key")
        } catch {
            #expect(error.code == .insecureKey)
            #expect(error.description.contains("644"))
            #expect(
                !error.description.contains(
                    try String(contentsOfFile: device.secretKeyPath, encoding: .utf8).trimmingCharacters(
                        in: .whitespacesAndNewlines)))
        }
    }

    @Test func rejectsBadOptionsAndMissingDevices() throws {
        var options = Device.Options()
        options.teamID = "short"
        #expect(throws: DeviceError.self) {
            try Device.create(at: try TestSupport.temporaryDirectory() + "/x", options: options)
        }
        do {
            _ = try Device.open(at: "/nonexistent/device")
            Issue.record("opened")
        } catch { #expect(error.code == .notFound) }
        let directory = try TestSupport.temporaryDirectory()
        try TestSupport.write("{\"format\": 9}", to: directory + "/device.json")
        do {
            _ = try Device.open(at: directory)
            Issue.record("opened")
        } catch { #expect(error.code == .corrupt) }
    }

    /// A process that lives on keeps what it read of a device (``Device/kept(at:)``, `strings()`), and reads it
    /// again once the files change: a strings file rewritten in place, one added, `device.json` replaced.
    @Test func keptDeviceAndStringsFollowTheirFiles() throws {
        let path = try TestSupport.temporaryDirectory() + "/kept"
        _ = try Device.create(at: path)
        let device = try Device.cached(at: path)
        #expect(try Device.cached(at: path).config == device.config)
        #expect(device.strings().table.localized("IM_MSG") == "You have received a message")
        let base = device.stringsDirectory + "/Base.lproj/Localizable.strings"
        // Rewritten in place (same inode): its size and times change.
        let handle = try #require(FileHandle(forWritingAtPath: base))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("\"IM_MSG\" = \"New message\";\n".utf8))
        try handle.close()
        #expect(device.strings().table.localized("IM_MSG") == "New message")
        #expect(device.strings().table.localized("IM_MSG") == "New message")
        // A file added to the folder.
        try TestSupport.write("\"IC_MSG\" = \"Ringing\";", to: device.stringsDirectory + "/Base.lproj/More.strings")
        #expect(device.strings().table.localized("IC_MSG") == "Ringing")
        // device.json replaced (`nse device set` renames a new file over it).
        var changed = device
        changed.config.locale = "de-DE"
        try changed.save()
        let reopened = try Device.cached(at: path)
        #expect(reopened.config.locale == "de-DE")
        // Gone: the same error as opening it.
        try FileManager.default.removeItem(atPath: path + "/device.json")
        #expect(throws: DeviceError.self) { try Device.cached(at: path) }
    }

    @Test func stringsLayerByLocale() throws {
        var options = Device.Options()
        options.locale = "fr-FR"
        let device = try Device.create(at: try TestSupport.temporaryDirectory() + "/fr", options: options)
        #expect(device.strings().table.localized("IM_MSG") == "You have received a message")
        try FileManager.default.createDirectory(
            atPath: device.stringsDirectory + "/fr.lproj", withIntermediateDirectories: true)
        try TestSupport.write(
            "\"IM_MSG\" = \"Message reçu\";\n\"IC_MSG\" = \"Appel entrant\";",
            to: device.stringsDirectory + "/fr.lproj/Localizable.strings")
        try FileManager.default.createDirectory(
            atPath: device.stringsDirectory + "/fr-FR.lproj", withIntermediateDirectories: true)
        try TestSupport.write(
            "\"IM_MSG\" = \"Vous avez un message\";", to: device.stringsDirectory + "/fr-FR.lproj/App.strings")
        try TestSupport.write("\"BROKEN\" = ", to: device.stringsDirectory + "/fr-FR.lproj/Broken.strings")
        let (table, problems) = device.strings()
        #expect(table.localized("IM_MSG") == "Vous avez un message")
        #expect(table.localized("IC_MSG") == "Appel entrant")
        #expect(table.localized("GC_MSG") == "You have been added to a chat room")
        #expect(problems.count == 1 && problems[0].contains("Broken.strings"))
    }

    @Test func summaryNeverShowsThePrivateKey() throws {
        let device = try Device.create(at: try TestSupport.temporaryDirectory() + "/s")
        let secret = try device.secretKey().exportBase64()
        let summary = device.summary().serialized()
        #expect(!summary.contains(secret))
        #expect(summary.contains(device.config.publicKey))
        #expect(device.ownsToken(device.config.remoteToken.uppercased()))
        #expect(!device.ownsToken("00"))
    }
}
