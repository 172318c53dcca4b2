import Testing
@testable import LNPTools

@Suite("One-line messages")
struct OneLineTests {
    @Test func aParsersMessageReadsAsLnpsOwn() {
        #expect(OneLine.of("Unknown option '--bogus'") == "unknown option '--bogus'")
        #expect(OneLine.of("Missing expected argument '<address>'\nHelp:  <address>  The addresses.\nUsage: lnp check")
            == "missing expected argument '<address>'")
        #expect(OneLine.of("IP address expected.") == "IP address expected", "an acronym keeps its capitals")
        #expect(OneLine.of("give at least one address") == "give at least one address")
        #expect(OneLine.of("") == "")
    }
}
