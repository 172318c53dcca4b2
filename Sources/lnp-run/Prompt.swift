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
///     Allow? a = Allow, d = Don't Allow (30 s):
///
/// Each line says whose word it is: the program is lnp-run's (what it started), the process
/// the kernel's (who asked), `reports` the process's own account of what it is doing (the
/// preload runs inside it), `which is` lnp-run's own look at that, and `why` the usage
/// description. Nothing a program chose reaches the terminal unescaped (`TerminalText`).
struct PromptText {
    var program: String
    var asker: Asker
    var ask: ReceivedAsk
    /// Why the operation is local, as lnp-run sees it (`AskCheck`).
    var reason: String
    /// The usage description: the asking process's own, else lnp-run's option.
    var usage: String
    var timeoutSeconds: Int

    var question: String {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        var lines = [
            "\u{1B}[0m",  // plain text whatever the program set (hidden, same-colour letters)
            "lnp: \u{201C}\(TerminalText.shown(name))\u{201D} would like to find and connect to devices on your local network.",
            "  program   \(TerminalText.shown(program))",
            "  process   \(asker.pid) \(TerminalText.shown(asker.executable))",
            "  reports   \(TerminalText.shown(ask.report))",
            "  which is  \(TerminalText.shown(reason))",
        ]
        if !usage.isEmpty { lines.append("  why       \(TerminalText.shown(usage))") }
        lines.append("Allow? a = Allow, d = Don't Allow (\(timeoutSeconds) s): ")
        return lines.joined(separator: "\r\n")
    }

    static let reminder = "\r\nPlease answer a (Allow) or d (Don't Allow): "
}

/// Reads the answer as it is typed: the first character of a line decides — `a` or `y`
/// allows, `d` or `n` denies — so that no other word (`cancel`, `later`) can answer by
/// accident; a line that starts otherwise asks again. Works whether the terminal gives lines
/// or keys.
struct AnswerReader {
    enum Outcome: Equatable { case allow, deny, unclear, pending, interrupt }

    private var atLineStart = true
    private var sawText = false

    mutating func feed(_ bytes: [UInt8]) -> Outcome {
        for byte in bytes {
            switch byte {
            case 0x03: return .interrupt  // Ctrl-C, typed on a terminal in raw mode
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                let unclear = sawText
                atLineStart = true
                sawText = false
                if unclear { return .unclear }
            case UInt8(ascii: " "), UInt8(ascii: "\t"): break
            default:
                guard atLineStart else { continue }
                atLineStart = false
                switch byte {
                case UInt8(ascii: "a"), UInt8(ascii: "A"), UInt8(ascii: "y"), UInt8(ascii: "Y"): return .allow
                case UInt8(ascii: "d"), UInt8(ascii: "D"), UInt8(ascii: "n"), UInt8(ascii: "N"): return .deny
                default: sawText = true
                }
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

    /// Drops what was typed before the question (meant for the program, not an answer).
    func discardTypeAhead() { tcflush(fd, TCIFLUSH) }

    func close() { Glibc.close(fd) }
}
