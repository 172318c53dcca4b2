#if canImport(Glibc)
import Glibc
#endif

/// A line of the system log that holds one of lnp's records: `--audit syslog` sends each as
/// `lnp[PID]: @cee: {…}`, and the loggers keep that message behind headers of their own:
///
///     <12>Nov 21 05:09:22 lnp[6604]: @cee: {…}                  the datagram itself
///     Nov 21 05:09:22 host lnp[6604]: @cee: {…}                 rsyslog's and syslog-ng's files
///     2026-11-21T05:09:22+0000 host lnp[6604]: @cee: {…}        journalctl -o short-iso
///     @cee: {…}                                                 journalctl -t lnp -o cat
///
/// So a line is lnp's when its first `@cee:` (the CEE cookie) is the start of its message:
/// right after the tag `lnp[PID]: ` or `lnp: ` — a word of its own, after the header's space
/// or the priority's `>`, and the first tag of the line (nothing before it ends in `: `, as a
/// tag does, where times and hosts do not) — or at the start of the line, as `journalctl -o
/// cat` prints messages alone. Another program's line, with or without a cookie, is not
/// lnp's, nor is another program's message that names lnp.
enum SystemLogLine {
    /// The record `line` holds after the cookie (spaces before it left in: JSON allows them);
    /// nil when the line is not lnp's.
    static func record(in line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard let at = firstCookie(in: line) else { return nil }
        let header = UnsafeBufferPointer(rebasing: line[..<at])
        guard header.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) || isLNPTag(ending: header) else { return nil }
        return UnsafeBufferPointer(rebasing: line[(at + cookie.count)...])
    }

    private static let cookie = Array("@cee:".utf8)

    /// Where the first `@cee:` starts.
    private static func firstCookie(in line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = line.baseAddress else { return nil }
        var from = 0
        while from + cookie.count <= line.count, let at = memchr(base + from, Int32(UInt8(ascii: "@")), line.count - from) {
            let index = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(at))
            if index + cookie.count <= line.count && line[index..<(index + cookie.count)].elementsEqual(cookie) { return index }
            from = index + 1
        }
        return nil
    }

    /// Whether `header` ends with lnp's tag and the space after it: `lnp[6604]: ` or `lnp: `.
    private static func isLNPTag(ending header: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = header.count
        guard end > 0, header[end - 1] == 0x20 else { return false }
        end -= 1
        guard end > 0, header[end - 1] == UInt8(ascii: ":") else { return false }
        end -= 1
        if end > 0, header[end - 1] == UInt8(ascii: "]") {
            var digits = end - 1
            while digits > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(header[digits - 1]) { digits -= 1 }
            guard digits < end - 1, digits > 0, header[digits - 1] == UInt8(ascii: "[") else { return false }
            end = digits - 1
        }
        guard end >= 3, header[(end - 3)..<end].elementsEqual("lnp".utf8) else { return false }
        let before = end - 3
        guard before == 0 || header[before - 1] == 0x20 || header[before - 1] == UInt8(ascii: ">") else { return false }
        return !zip(header[..<before], header[..<before].dropFirst()).contains { $0 == UInt8(ascii: ":") && $1 == 0x20 }
    }
}
