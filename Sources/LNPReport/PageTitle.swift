#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What the page's title names: the machine the report was made on, and the time its records
/// span (`lnp report — build-7, 21 Nov 2026 07:08–09:15 UTC`).
///
/// The records do not name the machine they were made on (a file may be copied anywhere, or
/// gathered from many through the system log), so the host is the one `lnp report` runs on,
/// and the page says so.
enum PageTitle {
    /// This machine's name, as `hostname` prints it: the kernel's, asked of no one else (a
    /// lookup of its full name could send a query to the network).
    static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "this machine" }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "this machine" : text
    }

    /// `21 Nov 2026 07:08–09:15 UTC`; to the second for a span under ten minutes
    /// (`07:08:20–07:08:22`); `21 Nov 2026 23:10 – 22 Nov 2026 01:15 UTC` across days.
    static func span(from first: AuditTime, to last: AuditTime, zone: TimeZone) -> String {
        let start = LocalTime(first, in: zone), end = LocalTime(last, in: zone)
        let seconds = last.seconds - first.seconds < 600
        let (from, to) = seconds ? (start.seconds, end.seconds) : (start.minutes, end.minutes)
        let name = zone.reportName
        if !start.isSameDay(as: end) { return "\(start.date) \(from) – \(end.date) \(to) \(name)" }
        return from == to ? "\(start.date) \(from) \(name)" : "\(start.date) \(from)–\(to) \(name)"
    }
}
