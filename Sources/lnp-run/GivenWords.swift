#if canImport(Glibc)
import Glibc
#endif

/// Words of lnp-run's command line as the kernel gave them, byte for byte. Swift's
/// `CommandLine.arguments` replaces bytes that are not UTF-8 with U+FFFD; the program's
/// arguments must reach it as they were given (a wrapper passes argv on untouched), so they are
/// taken from argv itself. lnp-run's own options are read as text.
public struct GivenWords: Equatable {
    public var bytes: [[UInt8]]

    public init(_ bytes: [[UInt8]]) {
        self.bytes = bytes
    }

    /// argv from `first` on.
    public static func fromArgv(_ first: Int) -> GivenWords {
        var words: [[UInt8]] = []
        var index = first
        while index < Int(CommandLine.argc), let word = CommandLine.unsafeArgv[index] {
            words.append(Array(UnsafeRawBufferPointer(start: word, count: strlen(word))))
            index += 1
        }
        return GivenWords(words)
    }

    /// The last `count` words.
    public func last(_ count: Int) -> GivenWords {
        GivenWords(Array(bytes.suffix(count)))
    }

    /// Copies for execve (`CStringCopies`).
    public func cStrings() -> [UnsafeMutablePointer<CChar>?] {
        CStringCopies.of(bytes)
    }

    /// The first of lnp-run's own words (those before the program's last `programCount`) that
    /// is not UTF-8, shown for a message; nil when all are. lnp-run reads its options as text,
    /// which turns such bytes into U+FFFD: `--audit` would write another file than the one named.
    public func optionWordNotUTF8(programCount: Int) -> String? {
        bytes.dropLast(programCount).first { !Self.isUTF8($0) }.map(Self.shown)
    }

    /// The message for such a word (status 125).
    public static func optionNotUTF8(_ shown: String) -> String {
        "'\(shown)': lnp-run's options are read as text, and this one is not UTF-8"
    }

    /// Whether `word` is UTF-8 (then the text lnp-run reads is the word itself).
    static func isUTF8(_ word: [UInt8]) -> Bool {
        Array(String(decoding: word, as: UTF8.self).utf8) == word
    }

    /// `word` for a message: its UTF-8 as text (control characters escaped, `TerminalText`),
    /// each byte that is not UTF-8 as `\xNN`.
    static func shown(_ word: [UInt8]) -> String {
        var shown = ""
        var run = ""
        var iterator = word.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                run.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                shown += TerminalText.shown(run)
                run = ""
                for byte in word[offset..<(offset + length)] {
                    shown += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
                }
                offset += length
            case .emptyInput:
                return shown + TerminalText.shown(run)
            }
        }
    }
}
