import Foundation
import LNPTools

/// The report as text for a terminal: per program a heading with its totals, then one row
/// per destination, most hits first. Times are local, to the second.
public struct TableFormat {
    public let timeZone: TimeZone
    private let formatter = DateFormatter()

    public init(timeZone: TimeZone = .current) {
        self.timeZone = timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    }

    public func lines(_ report: Report) -> [String] {
        var all: [String] = []
        lines(report) { all.append($0) }
        return all
    }

    /// The lines one by one, for writing as they are made: a program at a time is kept.
    public func lines(_ report: Report, _ line: (String) -> Void) {
        if report.programs.isEmpty { return line("no operations to report") }
        for (index, program) in report.programs.enumerated() {
            if index > 0 { line("") }
            line(UntrustedText.visible(program.program) + ": " + Self.totals(program))
            let rows = [columnNames] + program.destinations.map { $0.cells(formatter) }
            for text in Self.layout(rows) { line("  " + text) }
        }
    }

    /// `12 local-network operations (10 allowed, 2 denied), 3 not local; 14 app-initiated, 1 user-initiated`
    static func totals(_ program: ProgramReport) -> String {
        let count = program.local.total
        var text = "\(count) local-network operation\(count == 1 ? "" : "s")"
        text += " (\(program.local.allowed) allowed, \(program.local.denied) denied)"
        if program.nonLocal.total > 0 {
            text += ", \(program.nonLocal.total) not local"
            if program.nonLocal.denied > 0 { text += " (\(program.nonLocal.denied) denied)" }
        }
        return text + "; \(program.app) app-initiated, \(program.user) user-initiated"
    }

    /// The columns; the zone of the times is in their headings.
    var columnNames: [String] {
        let zone = timeZone.reportName
        return ["DESTINATION", "HOW", "NETWORK", "ALLOWED", "DENIED", "APP", "USER", "FIRST (\(zone))", "LAST (\(zone))"]
    }

    /// Which columns are counts, aligned right.
    static let countColumns: Set<Int> = [3, 4, 5, 6]

    /// Columns padded to their widest cell; no line ends in spaces.
    static func layout(_ rows: [[String]]) -> [String] {
        var widths = [Int](repeating: 0, count: rows.map(\.count).max() ?? 0)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            let cells = row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return countColumns.contains(index) ? padding + cell : cell + padding
            }
            var line = cells.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// `2026-11-21 11:00:00` in `timeZone`, cut to the second.
    func time(_ time: AuditTime) -> String { formatter.string(from: AuditTime(seconds: time.seconds).date) }

    /// The cells of a destination's row, in `timeZone`.
    func cells(_ destination: DestinationReport) -> [String] { destination.cells(formatter) }
}

extension DestinationReport {
    /// `printer.local:8080 (10.77.0.2)`, `tcp connect`, `local`, counts, first, last.
    func cells(_ formatter: DateFormatter) -> [String] {
        var label = destination.label
        if let address = addresses.first {
            label += " (\(address)" + (addresses.count > 1 ? ", +\(addresses.count - 1))" : ")")
        }
        let how = ([destination.transport].compactMap { $0 } + operations).joined(separator: " ")
        // Times cut to the second, never rounded up past the operation.
        return [
            UntrustedText.visible(label), UntrustedText.visible(how), destination.isLocal ? "local" : "not local",
            String(tally.allowed), String(tally.denied), String(app), String(user),
            formatter.string(from: AuditTime(seconds: first.seconds).date),
            formatter.string(from: AuditTime(seconds: last.seconds).date),
        ]
    }
}
