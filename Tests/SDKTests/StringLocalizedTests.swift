import Foundation
import Testing
import UserNotifications

/// `String(localized:)`, Foundation's on iOS and missing from Foundation on Linux: the key made of the text and its
/// interpolations' specifiers, looked up in a bundle's strings, the arguments put in.
@Suite struct StringLocalizedTests {
    private func bundle(_ strings: String) throws -> Bundle {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nse-localized-\(UUID().uuidString)")
        let lproj = folder.appendingPathComponent("en.lproj")
        try FileManager.default.createDirectory(at: lproj, withIntermediateDirectories: true)
        try strings.write(to: lproj.appendingPathComponent("Localizable.strings"), atomically: true, encoding: .utf8)
        return try #require(Bundle(path: folder.path))
    }

    @Test func aKeyTheTableLacksIsTheTextWithItsArguments() throws {
        let bundle = try bundle("")
        let count = 3
        let sender = "Alice"
        #expect(String(localized: "\(count) new from \(sender)", bundle: bundle) == "3 new from Alice")
        #expect(String(localized: "100% sure", bundle: bundle) == "100% sure")
        #expect(String(localized: "Ratio \(0.5)", bundle: bundle) == "Ratio 0.500000")
        #expect(String(localized: "Size \(UInt8(7))", bundle: bundle) == "Size 7")
    }

    @Test func aTranslationReordersTheArguments() throws {
        let bundle = try bundle(
            """
            "%lld new from %@" = "De %2$@ : %1$lld nouveaux";
            "100%% sure" = "Sûr à 100 %%";
            "greeting" = "Bonjour %@";
            """)
        let count = 3
        let sender = "Alice"
        #expect(String(localized: "\(count) new from \(sender)", bundle: bundle) == "De Alice : 3 nouveaux")
        #expect(String(localized: "100% sure", bundle: bundle) == "Sûr à 100 %")
        #expect(String(localized: "greeting", defaultValue: "Hello \(sender)", bundle: bundle) == "Bonjour Alice")
        #expect(String(localized: "farewell", defaultValue: "Bye \(sender)", bundle: bundle) == "Bye Alice")
    }

    /// The key Apple's tools extract: `%lld` for a signed integer, `%llu` an unsigned one, `%lf` a Double, `%@` a
    /// string; a table keyed so finds the value.
    @Test func theKeyIsTheTextWithSpecifiers() throws {
        let bundle = try bundle(#""%lld of %llu at %lf by %@" = "%4$@: %1$lld/%2$llu (%3$.1f)";"#)
        #expect(String(localized: "\(-2) of \(UInt(3)) at \(1.5) by \("x")", bundle: bundle) == "x: -2/3 (1.5)")
    }
}
