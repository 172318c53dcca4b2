import Testing
@testable import lnp_run

@Suite("GivenWords")
struct GivenWordsTests {
    /// UTF-8 is text as it is; anything else is not (and lnp-run would read another word).
    @Test func utf8OrNot() {
        #expect(GivenWords.isUTF8(Array("/usr/bin/tool-é".utf8)))
        #expect(GivenWords.isUTF8([]))
        #expect(!GivenWords.isUTF8([0x61, 0xff, 0x62]))
        #expect(!GivenWords.isUTF8([0x61, 0xc3]))  // cut short
        #expect(!GivenWords.isUTF8([0xed, 0xa0, 0x80]))  // a surrogate's encoding
    }

    /// In a message, each byte that is not UTF-8 is `\xNN`, and the text around it is shown as
    /// a terminal may show it.
    @Test func shownInAMessage() {
        #expect(GivenWords.shown([0x61, 0xff, 0x62, 0xc3]) == "a\\xffb\\xc3")
        #expect(GivenWords.shown(Array("/tmp/é\u{1b}[2J".utf8) + [0x80]) == "/tmp/é\\x1b[2J\\x80")
        #expect(GivenWords.shown([0x05]) == "\\x05")
    }

    /// The copies execve gets: every byte, and the NUL after it.
    @Test func copiesForExecve() {
        let words = GivenWords([[0x61, 0xff], [], Array("é".utf8)])
        let copies = words.cStrings()
        defer { copies.forEach { $0?.deallocate() } }
        #expect(copies.count == 4 && copies[3] == nil)
        for (copy, word) in zip(copies, words.bytes) {
            let bytes = UnsafeRawBufferPointer(start: copy!, count: word.count + 1)
            #expect(Array(bytes) == word + [0])
        }
    }
}
