import ArgumentParser
import Foundation
import LNPReport

/// `lnp report [AUDIT-FILE…]`: what programs did on the network, from their audit records.
///
/// A line that is not a record is named on stderr (`FILE:LINE: what is wrong`) and skipped;
/// the report covers the rest. Exit status: 0 when everything was read, 1 when a line was
/// malformed, 2 when a file could not be read (the report still covers the others), so
/// that scripts notice either.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Report what programs did on the network, from audit files.",
        discussion: """
            Reads the files lnp-run --audit writes (standard input when none is given, or for -). \
            The table shows, per program, each destination with its allowed and denied operations, \
            app- and user-initiated, first and last (local time). --format ndjson writes Apple's App \
            Privacy Report networkActivity records, of the allowed operations only (a denied one \
            contacted nothing); --format html writes one self-contained page with a timeline and a \
            chart per program.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, ndjson, html
    }

    @Option(help: ArgumentHelp("table, ndjson (Apple's App Privacy Report) or html.", valueName: "FORMAT"))
    var format: Format = .table

    @Option(help: ArgumentHelp(
        "Only records since then: 2026-11-21T10:00:00Z, 2026-11-21 (local midnight), or how long ago: 30m, 2h, 7d.",
        valueName: "TIME"))
    var since: String?

    @Option(help: ArgumentHelp(
        "Only this program: its path, or the last part of it (curl). May be repeated.", valueName: "PATH-OR-NAME"))
    var program: [String] = []

    @Argument(help: ArgumentHelp("Audit files; - or none for standard input.", valueName: "AUDIT-FILE"))
    var files: [String] = []

    func validate() throws {
        if let since {
            do { _ = try TimeFilter.since(since) } catch { throw ValidationError(error.description) }
        }
    }

    func run() throws {
        var filter = ReportFilter(programs: program)
        if let since { filter.since = try? TimeFilter.since(since) }
        var reading = AuditReading()
        for file in files.isEmpty ? ["-"] : files {
            reading.append(file == "-" ? AuditReader.readStandardInput() : AuditReader.read(path: file))
        }
        for problem in reading.problems {
            FileHandle.standardError.write(Data("lnp: \(problem)\n".utf8))
        }

        let report = Report(entries: reading.entries, filter: filter)
        let output: String
        switch format {
        case .table: output = TableFormat().lines(report).map { $0 + "\n" }.joined()
        case .ndjson: output = PrivacyReportFormat.lines(report).map { $0 + "\n" }.joined()
        case .html: output = HTMLFormat().page(report)
        }
        FileHandle.standardOutput.write(Data(output.utf8))

        if reading.hasUnreadableFile { throw ExitCode(2) }
        if reading.hasMalformedLine { throw ExitCode(1) }
    }
}
