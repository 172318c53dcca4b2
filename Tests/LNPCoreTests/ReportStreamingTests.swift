import Foundation
import Testing

@testable import LNPReport

#if canImport(Glibc)
import Glibc
#endif

private let utc = TimeZone(identifier: "UTC")!

/// Varied records in no particular order: several programs, names behind several addresses,
/// records of the same instant, both initiations, denied and not local ones, with causes and
/// reasons of several kinds (which a destination shows must not hang on the order).
private func shuffledEntries(_ count: Int, seed: UInt64) -> [AuditEntry] {
    var random = SeededRandom(seed: seed)
    let programs = ["/usr/bin/curl", "/usr/bin/wget", "/opt/scan"]
    return (0..<count).map { _ in
        let program = programs.randomElement(using: &random)!
        let offset = Int64.random(in: 0..<40, using: &random)
        let attribution: AuditEntry.Attribution = Bool.random(using: &random) ? .app : .user
        let decision: AuditEntry.Decision = Int.random(in: 0..<4, using: &random) == 0 ? .deny : .allow
        let causes: [String?] = decision == .deny ? ["remembered", "no-terminal", "some-new-word", nil] : ["remembered"]
        let because = causes.randomElement(using: &random)!
        let reason = ["on-link 10.77.0.0/24 via c0", "on-link 10.77.0.0/16 via c1", nil].randomElement(using: &random)!
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            var entry = resolveEntry(offset, "printer-\(Int.random(in: 0..<3, using: &random)).local", decision: decision)
            entry.because = because
            return entry
        case 1:
            return auditEntry(
                offset, program: program, op: ["connect", "sendto"].randomElement(using: &random)!,
                address: "10.77.0.\(Int.random(in: 1..<5, using: &random))", port: 8080,
                host: "printer-\(Int.random(in: 0..<3, using: &random)).local", decision: decision, because: because,
                attribution: attribution, reason: reason)
        case 2:
            return auditEntry(
                offset, program: program, address: "203.0.113.\(Int.random(in: 1..<3, using: &random))", port: 443,
                local: false, reason: "through a gateway (route 0.0.0.0/0)")
        default:
            return auditEntry(
                offset, microseconds: Int32.random(in: 0..<2, using: &random) * 500_000, program: program,
                port: [22, 8080, 9100].randomElement(using: &random)!, decision: decision, because: because,
                attribution: attribution, reason: reason)
        }
    }
}

/// The report as it was made before records were counted one at a time: each program's
/// records sorted by time, then gone through in that order. The streaming report must be the
/// same, whatever order the records come in.
private func reportFromSortedRecords(_ entries: [AuditEntry]) -> Report {
    let byProgram = Dictionary(grouping: entries, by: \.program)
    return Report(programs: byProgram.keys.sorted().map { path in
        let records = byProgram[path]!.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)
        var program = ProgramReport(program: path, first: records.first!.time, last: records.last!.time)
        var destinations: [Destination: DestinationReport] = [:]
        var order: [Destination] = []
        var activities: [String: PrivacyReportActivity] = [:]
        for entry in records {
            if entry.isLocal { program.local.count(entry.decision) } else { program.nonLocal.count(entry.decision) }
            if entry.decision == .deny { program.denials.add(entry.because) }
            if entry.attribution == .app { program.app += 1 } else { program.user += 1 }
            let destination = Destination(entry)
            if destinations[destination] == nil {
                destinations[destination] = DestinationReport(destination: destination, first: entry.time, last: entry.time)
                order.append(destination)
            }
            var report = destinations[destination]!
            if entry.decision == .deny { report.deniedBecause.insert(entry.because) }
            if let address = entry.address, address != destination.domain, !report.addresses.contains(address) {
                report.addresses.append(address)
            }
            if !report.operations.contains(entry.op) { report.operations.append(entry.op) }
            report.tally.count(entry.decision)
            if entry.attribution == .app { report.app += 1 } else { report.user += 1 }
            report.last = entry.time
            destinations[destination] = report
            guard entry.decision == .allow else { continue }
            let initiated: PrivacyReportActivity.InitiatedType = entry.attribution == .app ? .app : .user
            let key = entry.domain + (initiated == .app ? "\u{0}0" : "\u{0}1")
            if var activity = activities[key] {
                activity.hits += 1
                activity.timeStamp = entry.time
                activities[key] = activity
            } else {
                activities[key] = PrivacyReportActivity(
                    domain: entry.domain, firstTimeStamp: entry.time, timeStamp: entry.time, initiatedType: initiated,
                    hits: 1, bundleID: path)
            }
        }
        // A destination's reason: its earliest record's, the least of those of the same instant.
        for destination in order {
            let mine = records.filter { Destination($0) == destination }
            let earliest = mine.map(\.time).min()!
            let reasons = mine.filter { $0.time == earliest }.map { $0.reason ?? "" }
            destinations[destination]!.reason = reasons.min() == "" ? nil : reasons.min()
            destinations[destination]!.otherReasons = Set(mine.map(\.reason)).count > 1
        }
        program.destinations = order.map { destinations[$0]! }.sorted {
            $0.hits != $1.hits ? $0.hits > $1.hits : $0.destination < $1.destination
        }
        program.activities = activities.keys.sorted { a, b in
            let (x, y) = (activities[a]!, activities[b]!)
            return (x.domain, x.initiatedType == .app ? 0 : 1) < (y.domain, y.initiatedType == .app ? 0 : 1)
        }.map { activities[$0]! }
        return program
    })
}

private func lines(_ entries: [AuditEntry]) -> String {
    entries.map { entry in
        auditLine([
            "time": "\"\(entry.time.wholeSecondsUTC.dropLast())." + String(format: "%06d", entry.time.microseconds) + "Z\"",
            "program": JSONText.string(entry.program), "exe": JSONText.string(entry.program),
            "op": JSONText.string(entry.op), "fd": entry.fd.map(String.init) ?? "null",
            "transport": entry.transport.map(JSONText.string) ?? "null",
            "address": entry.address.map(JSONText.string) ?? "null", "port": entry.port.map(String.init) ?? "null",
            "host": entry.host.map(JSONText.string) ?? "null", "decision": "\"\(entry.decision.rawValue)\"",
            "attribution": "\"\(entry.attribution.rawValue)\"", "local": entry.isLocal ? "true" : "false",
            "pid": "42", "reason": entry.reason.map(JSONText.string) ?? "null",
            "because": entry.because.map(JSONText.string) ?? "null",
        ])
    }.joined(separator: "\n") + "\n"
}

@Suite("Reports read a record at a time")
struct ReportStreamingTests {
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func theReportIsTheSameAsFromSortedRecords(seed: UInt64) {
        let entries = shuffledEntries(600, seed: seed)
        let streamed = Report(entries: entries)
        #expect(streamed == reportFromSortedRecords(entries))
        // And the formats, which read nothing else, are too.
        #expect(TableFormat(timeZone: utc).lines(streamed) == TableFormat(timeZone: utc).lines(reportFromSortedRecords(entries)))
    }

    @Test func namesAndOperationsAreListedInTheOrderFirstSeenInTime() {
        let entries = [
            auditEntry(5, op: "sendto", address: "10.77.0.3", host: "printer.local"),
            auditEntry(1, address: "10.77.0.2", host: "printer.local"),
            auditEntry(9, address: "10.77.0.3", host: "printer.local"),
            auditEntry(3, op: "sendto", address: "10.77.0.4", host: "printer.local"),
        ]
        let destination = Report(entries: entries).programs[0].destinations[0]
        #expect(destination.addresses == ["10.77.0.2", "10.77.0.4", "10.77.0.3"])
        #expect(destination.operations == ["connect", "sendto"])
    }

    @Test func aFileIsReadInPiecesAsIfWhole() throws {
        let entries = shuffledEntries(3000, seed: 9)
        let text = lines(entries)
        #expect(text.utf8.count > 4 * LineReader.chunk, "the file takes several reads")
        let path = try makeTemporaryDirectory() + "/audit.jsonl"
        try writeFile(path, Array(text.utf8))
        let read = AuditReader.read(path: path)
        #expect(read.problems.isEmpty)
        #expect(read.entries == entries)
        #expect(read.entries == AuditReader.parse(Array(text.utf8)[...], file: path).entries)
        #expect(Report(entries: read.entries) == Report(entries: entries))
    }

    @Test func aLongLineIsReadAndATooLongOneNamed() throws {
        let long = String(auditLine().dropLast()) + ",\"future\":\"" + String(repeating: "x", count: 200_000) + "\"}"
        let huge = String(repeating: "y", count: LineReader.longestLine + 10)
        let path = try makeTemporaryDirectory() + "/audit.jsonl"
        try writeFile(path, Array([auditLine(), long, huge, auditLine(), huge].joined(separator: "\n").utf8))
        let read = AuditReader.read(path: path)
        #expect(read.entries.count == 3)
        #expect(read.problems.map(\.description) == [
            "\(path):3: longer than 1 MiB, not a record", "\(path):5: longer than 1 MiB, not a record",
        ])
    }

    /// A line of exactly 1 MiB is read (its newline is not part of it); one byte more is not.
    @Test func aLineOfExactlyTheLongestLengthIsRead() throws {
        func line(_ length: Int) -> String {
            let open = String(auditLine().dropLast()) + ",\"future\":\""
            return open + String(repeating: "x", count: length - open.utf8.count - 2) + "\"}"
        }
        let longest = line(LineReader.longestLine), tooLong = line(LineReader.longestLine + 1)
        #expect(longest.utf8.count == 1_048_576 && tooLong.utf8.count == 1_048_577)
        let path = try makeTemporaryDirectory() + "/audit.jsonl"
        try writeFile(path, Array([longest, tooLong, longest].joined(separator: "\n").utf8))
        let read = AuditReader.read(path: path)
        #expect(read.entries.count == 2, "the last line, without a newline, too")
        #expect(read.problems.map(\.description) == ["\(path):2: longer than 1 MiB, not a record"])
    }

    @Test func aPipeIsKeptForASecondReadingAndAFileReadAgainUpToWhereItEnded() throws {
        let text = lines(shuffledEntries(2000, seed: 4)) + "broken\n"
        let directory = try makeTemporaryDirectory()

        // A file that grows between the readings: the second stops where the first did.
        let path = directory + "/audit.jsonl"
        try writeFile(path, Array(text.utf8))
        let file = AuditInput(path: path)
        var first: [AuditEntry] = [], problems: [String] = []
        file.read(twice: true, entry: { first.append($0) }, problem: { problems.append($0.description) })
        #expect(problems == ["\(path):2001: not JSON"])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(auditLine().utf8))
        try handle.close()
        var second: [AuditEntry] = []
        #expect(file.readAgain(entry: { second.append($0) }) == nil)
        #expect(second == first)

        // A pipe, as standard input can be: copied as it is read.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let bytes = Array(text.utf8)
        let writer = Thread {
            _ = bytes.withUnsafeBytes { LineReader.writeAll(writeEnd, $0) }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        let name = "/dev/fd/\(readEnd)"
        let piped = AuditInput(path: name)
        var fromPipe: [AuditEntry] = [], again: [AuditEntry] = [], pipeProblems: [String] = []
        piped.read(twice: true, entry: { fromPipe.append($0) }, problem: { pipeProblems.append($0.description) })
        #expect(piped.readAgain(entry: { again.append($0) }) == nil)
        #expect(fromPipe == first)
        #expect(again == first)
        #expect(pipeProblems == ["\(name):2001: not JSON"])
    }

    /// A file rotated between the two readings (a new file at its path) is not read in its
    /// place: the second reading says why it read nothing.
    @Test func aFileReplacedBetweenTheReadingsIsNotReadAgain() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/audit.jsonl"
        try writeFile(path, Array(lines([auditEntry(0)]).utf8))
        let input = AuditInput(path: path)
        var first: [AuditEntry] = []
        input.read(twice: true, entry: { first.append($0) }, problem: { _ in })
        #expect(first.count == 1)
        try writeFile(directory + "/rotated.jsonl", Array(lines([auditEntry(5, program: "/usr/bin/wget")]).utf8))
        #expect(rename(directory + "/rotated.jsonl", path) == 0)
        var second: [AuditEntry] = []
        #expect(input.readAgain(entry: { second.append($0) }) == "it was replaced between the two readings")
        #expect(second.isEmpty)
    }
}
