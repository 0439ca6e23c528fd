import NSESIP
import Testing

/// Expects `body` to throw a `SIPError` with the given code.
func expectSIPError(_ code: SIPError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void)
{
    do {
        try body()
        Issue.record("expected SIPError \(code), got success", sourceLocation: sourceLocation)
    } catch let error as SIPError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected SIPError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Async variant of `expectSIPError`.
func expectSIPErrorAsync(
    _ code: SIPError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected SIPError \(code), got success", sourceLocation: sourceLocation)
    } catch let error as SIPError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected SIPError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
