import CGNUExtensions

#if canImport(Glibc)
import Glibc
#endif

/// The question lnp-run puts on the controlling terminal, Apple's alert in words:
///
///     lnp: “tool.py” would like to find and connect to devices on your local network.
///       program   /home/ana/tool.py
///       process   4242 /usr/bin/python3.12
///       reports   connect tcp 10.77.0.2:80
///       which is  on-link 10.77.0.0/24 via eth1
///       why       Finds the printers on your network.
///     Allow? type 47 and Enter to Allow, d = Don't Allow (30 s):
///
/// Each line says whose word it is: the program is lnp-run's (what it started), the process
/// the kernel's (who asked), `reports` the process's own account of what it is doing (the
/// preload runs inside it), `which is` lnp-run's own look at that, and `why` the usage
/// description. Nothing a program chose reaches the terminal unescaped (`TerminalText`), and
/// no field is longer than the terminal is wide, so none can wrap into a line of its own.
///
/// A program can still write on the person's terminal (it is the person's, and so is the
/// program) and draw a question of its own over this one. So Allow takes a code drawn at
/// random for each question: what is written to a terminal cannot be read back, so no
/// program can tell the person what to type. Don't Allow takes a key: being tricked into it
/// gives nothing away.
struct PromptText {
    var program: String
    var asker: Asker
    var ask: ReceivedAsk
    /// Why the operation is local, as lnp-run sees it (`AskCheck`).
    var reason: String
    /// The usage description: the asking process's own, else lnp-run's option.
    var usage: String
    var timeoutSeconds: Int
    var code: String
    /// The terminal's width, in columns.
    var width: Int = 80

    /// Puts the terminal back in order whatever the program left: a soft reset (DECSTR:
    /// modes, margins, character sets, attributes), the scroll region, the G0 set, the
    /// palette and default colours, origin mode and reverse video, a visible cursor.
    static let reset = "\u{1B}[!p\u{1B}[r\u{1B}(B\u{0F}\u{1B}]104\u{07}\u{1B}]110\u{07}\u{1B}]111\u{07}"
        + "\u{1B}[?6l\u{1B}[?5l\u{1B}[?25h\u{1B}[0m"

    var question: String {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        let room = max(20, width - 13)
        func field(_ text: String) -> String { TerminalText.shown(text, columns: room) }
        var lines = [
            Self.reset,
            "lnp: \u{201C}\(TerminalText.shown(name, columns: max(24, width - 76)))\u{201D} would like to find and connect to devices on your local network.",
            "  program   \(field(program))",
            "  process   \(asker.pid) \(field(asker.executable))",
            "  reports   \(field(ask.report))",
            "  which is  \(field(reason))",
        ]
        if !usage.isEmpty { lines.append("  why       \(field(usage))") }
        lines.append("Allow? type \(code) and Enter to Allow, d = Don't Allow (\(timeoutSeconds) s): ")
        return "\r\n" + lines.joined(separator: "\r\n")
    }

    func reminder() -> String { "\r\nPlease type \(code) and Enter to Allow, or d for Don't Allow: " }

    /// A code for one question: two digits, drawn from the system's random source.
    static func drawCode() -> String { String(Int.random(in: 10...99)) }
}

/// Reads the answer as it is typed: the code the question shows, then Enter, allows; `d` or
/// `n` at the start of a line denies at once; any other line asks again. What is typed is
/// echoed (the person's terminal is in raw mode while the program may be asked), and
/// Backspace takes back a character. Works whether the terminal gives lines or keys.
struct AnswerReader {
    enum Outcome: Equatable { case allow, deny, unclear, pending, interrupt }

    let code: String
    private var line: [UInt8] = []
    /// What to show of what was just typed.
    private(set) var echo = ""

    init(code: String) { self.code = code }

    mutating func feed(_ bytes: [UInt8]) -> Outcome {
        echo = ""
        for byte in bytes {
            switch byte {
            case 0x03: return .interrupt  // Ctrl-C, typed on a terminal in raw mode
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                let typed = line.filter { $0 != UInt8(ascii: " ") }
                line = []
                if typed.isEmpty { continue }
                return typed.elementsEqual(code.utf8) ? .allow : .unclear
            case 0x7f, 0x08:
                if !line.isEmpty {
                    line.removeLast()
                    echo += "\u{8} \u{8}"
                }
            case 0x20..<0x7f:
                if line.allSatisfy({ $0 == 0x20 }), "dDnN".utf8.contains(byte) { return .deny }
                guard line.count < 16 else { continue }
                line.append(byte)
                echo.unicodeScalars.append(Unicode.Scalar(byte))
            default: continue
            }
        }
        return .pending
    }
}

/// The person's terminal, for the prompt: reached through the relay only, so that what the
/// program types on its own terminal cannot answer (`TerminalRelay`). Never the program's
/// stdin or stdout, so a program whose output is redirected is still asked.
struct Terminal {
    let fd: Int32

    /// nil without a relay, or when lnp-run is a background job (it cannot read the terminal
    /// then): like an iOS app in the background, the program is not asked. While the prompt
    /// is up, the relay leaves what is typed to it.
    static func open(through relay: TerminalRelay?) -> Terminal? {
        guard let relay, !relay.hungUp, relay.isForeground else { return nil }
        let fd = fcntl(relay.terminal, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        relay.paused = true
        return Terminal(fd: fd)
    }

    /// Writes `text`, giving up after about two seconds of a terminal that takes nothing
    /// (output stopped with Ctrl-S): the supervisor must go on reaping and answering.
    func say(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        var waits = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0 && (errno == EINTR || errno == EAGAIN) && waits < 20 {
                waits += 1
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 100)
            } else {
                return
            }
        }
    }

    enum Input: Equatable {
        case typed([UInt8])
        case nothing
        /// Hung up, or unreadable: no answer can come.
        case gone
    }

    /// What has been typed.
    func read() -> Input {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count > 0 { return .typed(Array(buffer[0..<count])) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return .nothing }
        return .gone
    }

    /// How many columns the terminal has (80 if it does not say).
    var columns: Int {
        let columns = Int(lnp_terminal_columns(fd))
        return columns > 0 ? columns : 80
    }

    /// Drops what was typed before the question (meant for the program, not an answer).
    func discardTypeAhead() { tcflush(fd, TCIFLUSH) }

    func close() { Glibc.close(fd) }
}
