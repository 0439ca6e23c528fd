import NSEPayload
import Testing

@testable import NSEHost

/// The hidden-previews placeholder's format, read left to right: `%u` and `%1$u` the thread's count, `%%` a percent
/// sign (`%%u` the text "%u"), an empty text the system's "Notification".
@Suite struct HiddenPreviewPlaceholderTests {
    private func shown(_ text: String?, strings: StringsTable = StringsTable([:])) -> String {
        CategoryPresentation.placeholder(text, strings) { 3 }
    }

    @Test func theCountAndThePercentSign() {
        #expect(shown("%u new messages") == "3 new messages")
        #expect(shown("%1$u new, 100%% sure") == "3 new, 100% sure")
        #expect(shown("%%u stays") == "%u stays")
        #expect(shown("%u of %u") == "3 of 3")
        #expect(shown("50% off") == "50% off")
        #expect(shown("trailing %") == "trailing %")
    }

    @Test func aKeyOfTheAppsStringsAndAnEmptyText() {
        let strings = StringsTable(["NEW": "%u nouveaux", "EMPTY": ""])
        #expect(shown("NEW", strings: strings) == "3 nouveaux")
        #expect(shown("EMPTY", strings: strings) == "Notification")
        #expect(shown(nil) == "Notification")
        #expect(shown("") == "Notification")
    }
}
