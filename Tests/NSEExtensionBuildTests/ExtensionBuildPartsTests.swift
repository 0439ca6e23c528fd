import Testing

@testable import NSEExtensionBuild

@Suite struct CompilerMessagesTests {
    /// What the filter lets through of `chunks` fed in turn.
    static func filtered(_ chunks: [String]) -> String {
        final class Sink: @unchecked Sendable { var bytes: [UInt8] = [] }
        let sink = Sink()
        var messages = CompilerMessages { sink.bytes += $0 }
        for chunk in chunks { messages.feed(Array(chunk.utf8)) }
        messages.finish()
        return String(decoding: sink.bytes, as: UTF8.self)
    }

    static let archive = "/opt/swift/usr/lib/swift_static/linux/libFoundationEssentials.a(Data+Writing.swift.o)"
    static let warning = "warning: the use of `mktemp' is dangerous, better use `mkstemp' or `mkdtemp'"

    @Test func goldsOneLineIsDropped() {
        let user = "NotificationService.swift:3:9: warning: initialization of immutable value 'x' was never used\n"
        #expect(
            Self.filtered([user, "\(Self.archive):_ThreadLocal.swift.o:function $s20F: \(Self.warning)\n"]) == user)
    }

    @Test func gnuLdsTwoLinesAreDroppedTogether() {
        let pair = "/usr/bin/ld: \(Self.archive): in function `$s20F':\n(.text+0x3a1): \(Self.warning)\n"
        #expect(Self.filtered(["a\n", pair, "b\n"]) == "a\nb\n")
        // Split anywhere, the same.
        let whole = "a\n" + pair + "b\n"
        for cut in [1, 20, 90, whole.utf8.count - 1] {
            let bytes = Array(whole.utf8)
            let parts = [
                String(decoding: bytes[..<cut], as: UTF8.self), String(decoding: bytes[cut...], as: UTF8.self),
            ]
            #expect(Self.filtered(parts) == "a\nb\n", "cut at \(cut)")
        }
    }

    @Test func anInFunctionLineNotFollowedByTheWarningIsKept() {
        let line = "/usr/bin/ld: \(Self.archive): in function `f':\n"
        let error = "(.text+0x1): undefined reference to `g'\n"
        #expect(Self.filtered([line, error]) == line + error)
        // Held at the very end: still written.
        #expect(Self.filtered([line]) == line)
    }

    @Test func everythingElsePassesAsItCame() {
        #expect(
            Self.filtered(["x.swift:1:1: error: boom\r\n", "no newline at the end"])
                == "x.swift:1:1: error: boom\r\nno newline at the end")
        #expect(
            Self.filtered(["\n\n", "warning: the use of `mktemp' is dangerous\n"])
                == "\n\nwarning: the use of `mktemp' is dangerous\n")
    }
}

@Suite struct BundleIdentifierTests {
    @Test func aPlistWithoutOneGetsItFirstInItsTopDictionary() {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- <dict> in a comment before the plist -->
            <plist version="1.0">
            <dict>
            \t<key>NSExtension</key>
            \t<dict/>
            </dict>
            </plist>
            """
        let added = ExtensionBuilder.addingBundleIdentifier("org.example.app.Service", to: plist)
        #expect(
            added.contains(
                "<plist version=\"1.0\">\n<dict>\n\t<key>CFBundleIdentifier</key>\n\t<string>org.example.app.Service</string>\n\t<key>NSExtension</key>"
            ),
            "\(added)")
        #expect(added.contains("<!-- <dict> in a comment before the plist -->"))
    }

    @Test func anEmptyTopDictionaryIsOpened() {
        let added = ExtensionBuilder.addingBundleIdentifier("a.b", to: "<plist version=\"1.0\"><dict/></plist>")
        #expect(
            added
                == "<plist version=\"1.0\"><dict>\n\t<key>CFBundleIdentifier</key>\n\t<string>a.b</string>\n</dict></plist>"
        )
    }

    @Test func theSettingIsExpanded() {
        let text = "<string>$(PRODUCT_BUNDLE_IDENTIFIER)</string><string>${PRODUCT_MODULE_NAME}</string>"
        #expect(
            ExtensionBuilder.expandingBuildSettings(text, bundleIdentifier: "a.b")
                == "<string>a.b</string><string>NotificationServiceExtension</string>")
    }

    @Test(arguments: [
        ("org.example.app.NotificationService", true), ("com.acme-chat.NSE2", true), ("", false), ("bad id", false),
        ("a/b", false), ("é.app", false), ("a<b", false),
    ])
    func applesRule(identifier: String, valid: Bool) {
        #expect((ExtensionBuilder.bundleIdentifierProblem(identifier) == nil) == valid)
    }
}
