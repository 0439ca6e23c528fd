import NSECrypto
import NSEPayload
import Testing

/// Every code a reason can start with is a `ReasonCode` (docs/result.md lists them; `make lint` checks that list):
/// the envelope's and the plaintext's own error codes included, which are made below the module that has the enum.
@Suite struct ReasonCodeTests {
    @Test func theEnvelopesAndPlaintextsErrorCodesAreReasonCodes() {
        let envelope: [EnvelopeError.Code] = [
            .malformed, .unsupportedVersion, .unsupportedAlgorithm, .notBase64, .wrongKey, .truncated,
            .authenticationFailed,
        ]
        for code in envelope { #expect(ReasonCode(rawValue: code.rawValue) != nil, "\(code.rawValue)") }
        for code in [PlaintextError.Code.notJSON, .schema] {
            #expect(ReasonCode(rawValue: code.rawValue) != nil, "\(code.rawValue)")
        }
    }

    @Test func aReasonIsItsCodeAndItsDetail() {
        let reason = ReasonCode.sipRegisterFailed.reason("the registrar answered 503")
        #expect(reason == "sip-register-failed: the registrar answered 503")
        #expect(ReasonCode(reason: reason) == .sipRegisterFailed)
        #expect(
            ReasonCode(reason: "aps.mutable-content is not 1: iOS shows the alert as sent") == .mutableContentNotSet)
        #expect(ReasonCode(reason: "MalformedPayload: stdin: …") == nil)
        #expect(Set(ReasonCode.allCases.map(\.rawValue)).count == ReasonCode.allCases.count)
    }
}
