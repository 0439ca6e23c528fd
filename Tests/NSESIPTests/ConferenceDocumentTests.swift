import NSESIP
import Testing

/// The chat room documents: RFC 4826 resource lists (the participants a room is created with and invited to) and
/// RFC 4575 conference-info (a room's state in its NOTIFYs), written and read back, read as liblinphone writes
/// them, and refused when they are not what they claim or exceed the reader's bounds.
@Suite struct ConferenceDocumentTests {
    // MARK: - resource-lists

    @Test func aResourceListReadsBackAsWritten() throws {
        let uris = try ["sip:bob@example.org", "sip:carol@example.org;transport=tcp"].map { try SIPURI(parsing: $0) }
        let written = SIPResourceList(uris: uris).serialized()
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<resource-lists"))
        #expect(text.contains("xmlns=\"urn:ietf:params:xml:ns:resource-lists\""))
        #expect(try SIPResourceList(parsing: written).uris == uris)
    }

    @Test func aResourceListAsLiblinphoneWritesItIsRead() throws {
        // Display names and copy-control attributes (RFC 5364) are extensions the reader skips; nested lists count.
        let document = """
            <?xml version="1.0" encoding="UTF-8" standalone="no"?>
            <!-- participants -->
            <resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists" xmlns:cp="urn:ietf:params:xml:ns:copycontrol">
              <list>
                <entry uri="sip:bob@example.org" cp:copyControl="to"><display-name>Bob &amp; co</display-name></entry>
                <list><entry uri='sip:carol@example.org'/></list>
              </list>
            </resource-lists>
            """
        let list = try SIPResourceList(parsing: Array(document.utf8))
        #expect(list.uris.map(\.description) == ["sip:bob@example.org", "sip:carol@example.org"])
    }

    @Test(arguments: [
        // Not a resource list: another root, another namespace, no namespace.
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info"/>"#,
        #"<resource-lists xmlns="urn:example"><list><entry uri="sip:a@b"/></list></resource-lists>"#,
        #"<resource-lists><list><entry uri="sip:a@b"/></list></resource-lists>"#,
        // An entry without its uri, or with one that is not a SIP URI.
        #"<resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"><list><entry/></list></resource-lists>"#,
        #"<resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"><list><entry uri="mailto:x"/></list></resource-lists>"#,
        // Not XML, or XML the reader refuses: a DTD (entity expansion), unclosed, mismatched, two roots.
        #"<!DOCTYPE r [<!ENTITY a "aaaa">]><resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"/>"#,
        #"<resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"><list>"#,
        #"<resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"></list>"#,
        #"<resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"/><x/>"#,
        #"<p:resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"/>"#,
        "",
    ])
    func aDocumentThatIsNotAResourceListIsRefused(_ document: String) {
        #expect(throws: SIPError.self) { try SIPResourceList(parsing: Array(document.utf8)) }
    }

    @Test func theReaderHasBounds() throws {
        let entries = String(repeating: #"<entry uri="sip:a@b"/>"#, count: SIPResourceList.maxEntries + 1)
        let many =
            #"<resource-lists xmlns="urn:ietf:params:xml:ns:resource-lists"><list>"# + entries
            + "</list></resource-lists>"
        #expect(throws: SIPError(.messageTooLarge, "resource-lists: more than 256 entries")) {
            try SIPResourceList(parsing: Array(many.utf8))
        }
        let deep = String(repeating: "<list>", count: 40) + String(repeating: "</list>", count: 40)
        let error = #expect(throws: SIPError.self) { try SIPXMLElement(parsing: Array(deep.utf8)) }
        #expect(error?.code == .messageTooLarge)
        let big = "<a>" + String(repeating: "x", count: SIPXMLElement.Limits.default.maxBytes) + "</a>"
        #expect(
            (#expect(throws: SIPError.self) { try SIPXMLElement(parsing: Array(big.utf8)) })?.code == .messageTooLarge)
    }

    @Test func textIsDecodedOnce() throws {
        let element = try SIPXMLElement(parsing: Array("<a b=\"&lt;&amp;lt;\">&#233;t&#xE9; &amp;amp;</a>".utf8))
        #expect(element.attributes["b"] == "<&lt;")
        #expect(element.text == "été &amp;")
        #expect(throws: SIPError.self) { try SIPXMLElement(parsing: Array("<a>&nbsp;</a>".utf8)) }
        #expect(throws: SIPError.self) { try SIPXMLElement(parsing: Array("<a>&#0;</a>".utf8)) }
        #expect(throws: SIPError.self) { try SIPXMLElement(parsing: [0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E]) }
    }

    /// Mutations of valid documents (a fixed seed: the same run every time): never a crash, errors on one line,
    /// and what parses reads back as written. The `conference` fuzz target does the same under libFuzzer.
    @Test func mutatedDocumentsNeverBreakTheReader() throws {
        let seeds = [
            SIPResourceList(uris: [try SIPURI(parsing: "sip:bob@example.org")]).serialized(),
            SIPConferenceInfo(
                entity: Self.room, version: 2, subject: "a & b",
                users: [.init(entity: "sip:alice@example.org", roles: ["admin"])]
            ).serialized(),
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(max(bound, 1)))
        }
        let alphabet = Array("<>/=\"'&;#x:! ?-abcdefgsipuserntryl0129\n".utf8)
        for round in 0..<4000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...next(4) {
                let at = next(bytes.count)
                switch next(3) {
                case 0: bytes[at] = alphabet[next(alphabet.count)]
                case 1: bytes.insert(alphabet[next(alphabet.count)], at: at)
                default: bytes.remove(at: at)
                }
            }
            do {
                let list = try SIPResourceList(parsing: bytes)
                #expect(
                    try SIPResourceList(parsing: list.serialized()).uris.map(\.description)
                        == list.uris.map(\.description))
            } catch {
                #expect(!"\(error)".contains("\n"))
            }
            do {
                let info = try SIPConferenceInfo(parsing: bytes)
                #expect(try SIPConferenceInfo(parsing: info.serialized()) == info)
            } catch {
                #expect(!"\(error)".contains("\n"))
            }
        }
    }

    // MARK: - conference-info

    static let room = "sip:chatroom-1a2b@example.org"

    @Test func conferenceInfoReadsBackAsWritten() throws {
        let info = SIPConferenceInfo(
            entity: Self.room, version: 7, subject: "Trip <to> \"Lyon\" & back",
            users: [
                .init(entity: "sip:alice@example.org", roles: ["admin", "participant"]),
                .init(entity: "sip:bob@example.org", roles: ["participant"]),
            ])
        let written = info.serialized()
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.contains("<subject>Trip &lt;to&gt; &quot;Lyon&quot; &amp; back</subject>"))
        #expect(text.contains(#"<user entity="sip:alice@example.org" state="full"><roles><entry>admin</entry>"#))
        let read = try SIPConferenceInfo(parsing: written)
        #expect(read == info)
        #expect(read.users.map(\.isAdmin) == [true, false])
    }

    @Test func conferenceInfoAsLiblinphoneWritesItIsRead() throws {
        // A partial document with a prefix for the namespace, liblinphone's extension elements and endpoints.
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ci:conference-info xmlns:ci="urn:ietf:params:xml:ns:conference-info"
                xmlns:linphone-cie="linphone:xml:ns:conference-info-linphone-extension"
                entity="sip:chatroom-1a2b@example.org" state="partial" version="12">
              <ci:conference-description><ci:subject>Trip</ci:subject>
                <ci:keywords>x</ci:keywords></ci:conference-description>
              <ci:users>
                <ci:user entity="sip:bob@example.org" state="deleted"/>
                <ci:user entity="sip:carol@example.org" state="full">
                  <ci:roles><ci:entry>participant</ci:entry></ci:roles>
                  <ci:endpoint entity="sip:carol@example.org;gr=urn:uuid:1"><ci:status>connected</ci:status></ci:endpoint>
                  <linphone-cie:ephemeral>x</linphone-cie:ephemeral>
                </ci:user>
              </ci:users>
            </ci:conference-info>
            """
        let info = try SIPConferenceInfo(parsing: Array(document.utf8))
        #expect(info.entity == Self.room && info.version == 12 && info.state == .partial && info.subject == "Trip")
        #expect(
            info.users == [
                .init(entity: "sip:bob@example.org", roles: [], state: .deleted),
                .init(entity: "sip:carol@example.org", roles: ["participant"]),
            ])
    }

    @Test(arguments: [
        #"<conference-info entity="sip:r@x" version="1"/>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" version="1"/>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" entity="sip:r@x"/>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" entity="sip:r@x" version="-1"/>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" entity="sip:r@x" version="1" state="all"/>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" entity="sip:r@x" version="1"><users><user/></users></conference-info>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" entity="sip:r@x" version="1" version="2"/>"#,
        #"<conference-info xmlns="urn:ietf:params:xml:ns:conference-info" entity="sip:r@x" version="1"><![CDATA[x]]></conference-info>"#,
    ])
    func aDocumentThatIsNotConferenceInfoIsRefused(_ document: String) {
        #expect(throws: SIPError.self) { try SIPConferenceInfo(parsing: Array(document.utf8)) }
    }
}
