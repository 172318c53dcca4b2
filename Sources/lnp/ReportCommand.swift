import ArgumentParser
import Foundation
import LNPReport

/// `lnp report [AUDIT-FILE…]`: what programs did on the network, from their audit records, or
/// the records themselves (`--format json`).
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
            app- and user-initiated, first and last (local time). --format json (or --json) writes the \
            records themselves, one JSON object a line, every field, denials included, for scripts; \
            --format ndjson writes Apple's App Privacy Report networkActivity records, of the allowed \
            operations only (a denied one contacted nothing); --format html writes one self-contained \
            page, titled with this machine's name and the records' span: an overview of every \
            program's allowed and denied operations, the busiest destinations and why operations were \
            denied, then a timeline and a chart per program; it counts together the least busy \
            destinations and programs of a large audit, so that it stays under 2 MB.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, ndjson, html
    }

    @Option(help: ArgumentHelp(
        "table, json (the records, one a line), ndjson (Apple's App Privacy Report) or html.", valueName: "FORMAT"))
    var format: Format?

    @Flag(help: "The same as --format json, as the other commands spell it.")
    var json = false

    @Option(help: ArgumentHelp(
        "Only records since then: 2026-11-21T10:00:00Z, 2026-11-21 (local midnight), or how long ago: 30m, 2h, 7d.",
        valueName: "TIME"))
    var since: String?

    @Option(help: ArgumentHelp(
        "Only this program: its path, or the last part of it (curl). May be repeated.", valueName: "PATH-OR-NAME"))
    var program: [String] = []

    @Argument(help: ArgumentHelp("Audit files or system logs; - or none for standard input.", valueName: "AUDIT-FILE"))
    var files: [String] = []

    /// What `--format` and `--json` ask for.
    var chosenFormat: Format { json ? .json : format ?? .table }

    func validate() throws {
        if json, let format, format != .json {
            throw ValidationError("--json is --format json; it cannot go with --format \(format.rawValue)")
        }
        if let since {
            do { _ = try TimeFilter.since(since) } catch { throw ValidationError(error.description) }
        }
    }

    func run() throws {
        var filter = ReportFilter(programs: program)
        if let since { filter.since = try? TimeFilter.since(since) }
        let inputs = (files.isEmpty ? ["-"] : files).map(AuditInput.init(path:))
        var reading = Reading()
        var output = ReportOutput()
        if chosenFormat == .json {
            // Each record out as it comes in: nothing is kept.
            var selection = RecordSelection(filter)
            reading.read(inputs, twice: false) { if selection.takes($0) { output.line($0.jsonLine) } }
        } else {
            var builder = ReportBuilder(filter: filter)
            reading.read(inputs, twice: chosenFormat == .html) { builder.add($0) }
            write(builder.finish(), of: inputs, filter: filter, to: &output)
        }
        output.flush()
        if let failure = output.failure {
            let reason = String(cString: strerror(failure))
            FileHandle.standardError.write(Data("lnp: cannot write the report: \(reason)\n".utf8))
            throw ExitCode.failure
        }

        if reading.unreadable { throw ExitCode(2) }
        if reading.malformed { throw ExitCode(1) }
    }

    /// The table, Apple's records or the page.
    private func write(_ report: Report, of inputs: [AuditInput], filter: ReportFilter, to output: inout ReportOutput) {
        switch chosenFormat {
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
        case .json: break  // written as read
        }
    }

    /// Reads the inputs, saying each problem as it is met (not kept), and remembering which
    /// kinds there were for the exit status.
    private struct Reading {
        var unreadable = false
        var malformed = false

        mutating func read(_ inputs: [AuditInput], twice: Bool, entry: (AuditEntry) -> Void) {
            for input in inputs {
                input.read(twice: twice, entry: entry) { problem in
                    switch problem.kind {
                    case .unreadableFile: unreadable = true
                    case .malformedLine: malformed = true
                    case .noRecords: break  // a note: the input was read
                    }
                    FileHandle.standardError.write(Data("lnp: \(problem)\n".utf8))
                }
            }
        }
    }
}
