import Testing
@testable import LNPCoreHost

/// The first question's name, or nil.
private func questionName(_ message: [UInt8], capacity: Int = 256) -> String? {
    var name = [UInt8](repeating: 0xff, count: capacity)
    let length = message.withUnsafeBytes { raw in
        name.withUnsafeMutableBytes { DNSMessage.questionName(raw, into: $0) }
    }
    guard let length else { return nil }
    #expect(name[length] == 0, "NUL-terminated")
    return String(decoding: name[0..<length], as: UTF8.self)
}

/// A query as res_mkquery writes it: a 12-byte header with one question, then the name.
private func query(_ labels: [String], questions: UInt8 = 1) -> [UInt8] {
    var message: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0x00, questions, 0, 0, 0, 0, 0, 0]
    for label in labels { message += [UInt8(label.utf8.count)] + Array(label.utf8) }
    return message + [0, 0, 1, 0, 1]  // the root, QTYPE A, QCLASS IN
}

@Suite("DNSMessage")
struct DNSMessageTests {
    @Test func readsTheQuestionName() {
        #expect(questionName(query(["printer", "local"])) == "printer.local")
        #expect(questionName(query(["example", "com"])) == "example.com")
        #expect(questionName(query([])) == "")
    }

    @Test func refusesWhatIsNoQuestion() {
        #expect(questionName(query(["example", "com"], questions: 0)) == nil)
        #expect(questionName(Array(query(["example", "com"]).prefix(16))) == nil, "a name cut short")
        #expect(questionName([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c]) == nil, "a pointer")
        #expect(questionName(Array(query(["x"]).prefix(11))) == nil, "a header cut short")
        #expect(questionName(query([String(repeating: "a", count: 64)])) == nil, "a label over 63 bytes")
    }

    @Test func neverWritesPastItsBuffer() {
        #expect(questionName(query(["printer", "local"]), capacity: 13) == nil)
        #expect(questionName(query(["printer", "local"]), capacity: 14) == "printer.local")
    }
}
