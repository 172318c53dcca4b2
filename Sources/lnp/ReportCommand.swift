import ArgumentParser
import Foundation
import LNPReport

/// `lnp report [AUDIT-FILE…]`: what programs did on the network, from their audit records.
///
/// A line that is not a record is named on stderr (`FILE:LINE: what is wrong`) and skipped;
/// the report covers the rest. Files are read a buffer at a time and each record counted as it
/// comes, so memory grows with the programs and destinations, not with the files. Exit
/// status: 0 when everything was read, 1 when a line was malformed (or the report could not be
/// written), 2 when a file could not be read (the report still covers the others), so that
/// scripts notice either.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Report what programs did on the network, from audit files.",
        discussion: """
            Reads the files lnp-run --audit writes (standard input when none is given, or for -), or \
            the system log's lines of them (lnp[PID]: @cee: {…}; other programs' lines are skipped). \
            The table shows, per program, each destination with its allowed and denied operations, \
            app- and user-initiated, first and last (local time). --format ndjson writes Apple's App \
            Privacy Report networkActivity records, of the allowed operations only (a denied one \
            contacted nothing); --format html writes one self-contained page with a timeline and a \
            chart per program, which counts together the least busy destinations and programs of a \
            large audit, so that it stays under 2 MB.
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

    @Argument(help: ArgumentHelp("Audit files or system logs; - or none for standard input.", valueName: "AUDIT-FILE"))
    var files: [String] = []

    func validate() throws {
        if let since {
            do { _ = try TimeFilter.since(since) } catch { throw ValidationError(error.description) }
        }
    }

    func run() throws {
        var filter = ReportFilter(programs: program)
        if let since { filter.since = try? TimeFilter.since(since) }
        // Problems are said as they are met, not kept.
        var builder = ReportBuilder(filter: filter)
        var unreadable = false, malformed = false
        let inputs = (files.isEmpty ? ["-"] : files).map(AuditInput.init(path:))
        for input in inputs {
            input.read(twice: format == .html, entry: { builder.add($0) }) { problem in
                switch problem.kind {
                case .unreadableFile: unreadable = true
                case .malformedLine: malformed = true
                case .noRecords: break  // a note: the input was read
                }
                FileHandle.standardError.write(Data("lnp: \(problem)\n".utf8))
            }
        }
        let report = builder.finish()

        var output = ReportOutput()
        switch format {
        case .table: TableFormat().lines(report) { output.line($0) }
        case .ndjson:
            for activity in PrivacyReportFormat.activities(report) { output.line(activity.jsonLine) }
        case .html:
            // The timelines need each program's span and busiest destinations: a second reading.
            let html = HTMLFormat()
            var timelines = Timelines(report: report, for: html, filter: filter)
            for input in inputs {
                if let reason = input.readAgain(entry: { timelines.add($0) }) {
                    timelines.leaveOut(input.programs, unread: "\(input.name): \(reason)")
                    let warning = "lnp: \(input.name): \(reason); its programs are shown without a timeline\n"
                    FileHandle.standardError.write(Data(warning.utf8))
                }
            }
            output.write(html.page(report, timelines: timelines))
        }
        output.flush()
        if let failure = output.failure {
            let reason = String(cString: strerror(failure))
            FileHandle.standardError.write(Data("lnp: cannot write the report: \(reason)\n".utf8))
            throw ExitCode.failure
        }

        if unreadable { throw ExitCode(2) }
        if malformed { throw ExitCode(1) }
    }
}
