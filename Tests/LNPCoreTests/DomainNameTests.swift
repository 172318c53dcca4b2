import Testing
@testable import LNPCoreHost

private func isValid(_ name: String) -> Bool {
    Array(name.utf8).withUnsafeBufferPointer { DomainName.isValid($0) }
}

private func isValid(bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { DomainName.isValid($0) }
}

/// A name of exactly `length` characters made of labels of at most 63.
private func name(length: Int) -> String {
    var result = ""
    while result.utf8.count < length {
        if !result.isEmpty { result += "." }
        result += String(repeating: "a", count: min(63, length - result.utf8.count))
    }
    precondition(result.utf8.count == length && !result.hasSuffix("."), "helper built \(result.utf8.count) for \(length)")
    return result
}

@Suite("DomainName")
struct DomainNameTests {
    @Test(arguments: [
        "example.com", "example.com.", "a", "a.", "printer.local", "under_score.example", "xn--bcher-kva.example", "1.2.3.4",
        "UPPER.Case", "a-b.c-d", "!#$%&'*+/=?^`{|}~.example",
    ])
    func validNames(name: String) {
        #expect(isValid(name), "\(name)")
    }

    @Test(arguments: [
        "", ".", "..", "a..b", ".a", "a..", "..a", "a b", " a", "a ", "a\tb", "é.com", "example.cöm", "a\u{7f}", "a\u{0}b", "a\nb",
        "a\u{1}",
    ])
    func invalidNames(name: String) {
        #expect(!isValid(name), "\(name.debugDescription)")
    }

    @Test func totalLength() {
        #expect(isValid(name(length: 253)))
        #expect(!isValid(name(length: 254)))
        #expect(isValid(name(length: 253) + "."), "the final dot of a fully qualified name does not count")
        #expect(!isValid(name(length: 254) + "."))
        #expect(!isValid(name(length: 1000)))
    }

    @Test func labelLength() {
        let label63 = String(repeating: "x", count: 63)
        let label64 = String(repeating: "x", count: 64)
        #expect(isValid(label63))
        #expect(!isValid(label64))
        #expect(isValid("a.\(label63).b"))
        #expect(!isValid("a.\(label64).b"))
        #expect(!isValid("a.\(label64)"))
        #expect(isValid("\(label63).\(label63)."))
    }

    @Test func everyControlAndNonASCIIByteIsRejected() {
        for byte in UInt8(0)...UInt8(255) where byte <= 0x20 || byte >= 0x7f {
            #expect(!isValid(bytes: Array("ab".utf8) + [byte] + Array("cd".utf8)), "byte \(byte)")
        }
        for byte in UInt8(0x21)...UInt8(0x7e) where byte != UInt8(ascii: ".") {
            #expect(isValid(bytes: [UInt8(ascii: "a"), byte]), "byte \(byte)")
        }
    }
}
