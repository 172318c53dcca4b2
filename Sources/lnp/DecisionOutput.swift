import ArgumentParser
import Foundation
import LNPStore
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A decision as `lnp list --json` (and `allow`/`deny --json`) shows it.
struct DecisionReport: Encodable, Equatable {
    var program: String
    var state: String
    var source: String
    var sourceFile: String?
    var sourceLine: Int?
    var decidedAt: String?
    var buildID: String?
    var currentBuildID: String?
    var buildIDChanged: Bool
    var fileMissing: Bool
    var lastUsed: String?

    /// What the file at the path is now, compared with what was decided.
    init(_ decision: Decision) {
        program = decision.path
        state = decision.state.rawValue
        switch decision.source {
        case .user:
            source = "user"
        case .administrator(let file, let line):
            source = "administrator"
            sourceFile = file
            sourceLine = line
        }
        decidedAt = decision.decidedAt.map(Times.iso8601)
        buildID = decision.buildID
        lastUsed = decision.lastUsed.map(Times.iso8601)
        let current = FileNow(decision.path)
        fileMissing = !current.exists
        currentBuildID = current.buildID
        buildIDChanged = FileNow.hasChanged(decision, current)
    }

    // Absent values are written as null, not left out.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(program, forKey: .program)
        try container.encode(state, forKey: .state)
        try container.encode(source, forKey: .source)
        try container.encode(sourceFile, forKey: .sourceFile)
        try container.encode(sourceLine, forKey: .sourceLine)
        try container.encode(decidedAt, forKey: .decidedAt)
        try container.encode(buildID, forKey: .buildID)
        try container.encode(currentBuildID, forKey: .currentBuildID)
        try container.encode(buildIDChanged, forKey: .buildIDChanged)
        try container.encode(fileMissing, forKey: .fileMissing)
        try container.encode(lastUsed, forKey: .lastUsed)
    }

    enum CodingKeys: String, CodingKey {
        case program, state, source, sourceFile, sourceLine, decidedAt, buildID, currentBuildID, buildIDChanged,
            fileMissing, lastUsed
    }
}

/// The file at a decided path, now.
struct FileNow {
    var exists: Bool
    var buildID: String?

    init(_ path: String) {
        var info = stat()
        exists = stat(path, &info) == 0
        buildID = exists ? ProgramIdentity.currentBuildID(of: path) : nil
    }

    /// A person's decision whose file is there but no longer has the build-id it was decided
    /// with (administrator entries name a path only).
    static func hasChanged(_ decision: Decision, _ now: FileNow) -> Bool {
        decision.source == .user && now.exists && now.buildID != decision.buildID
    }

    /// "build-id changed: now abcdef012345", "file missing", or nothing.
    static func note(_ decision: Decision, _ now: FileNow) -> String {
        if !now.exists { return "file missing" }
        if hasChanged(decision, now) { return "build-id changed: now " + (now.buildID.map(short) ?? "none") }
        return ""
    }

    static func short(_ buildID: String) -> String { String(buildID.prefix(12)) }
}

enum Times {
    /// `seconds` since 1970, as `2026-11-25T07:00:00Z`.
    static func iso8601(_ seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// `seconds` since 1970, as `2026-11-25 08:00` in the local time zone.
    static func local(_ seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }
}

enum Output {
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Columns padded to their widest cell; the last one is not padded, nor any line's end.
    /// Every cell is shown escaped (`UntrustedText`): a path with a newline or a tab stays one
    /// cell of one row.
    static func table(_ rows: [[String]]) -> [String] {
        let rows = rows.map { $0.map(UntrustedText.visible) }
        guard let columns = rows.map(\.count).max() else { return [] }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                line += index == row.count - 1 ? cell : cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    static func warn(_ message: String) {
        FileHandle.standardError.write(Data("lnp: warning: \(message)\n".utf8))
    }

    /// One line on stderr, then the exit status.
    static func fail(_ message: String, status: Int32 = 1) -> ExitCode {
        error(message)
        return ExitCode(status)
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("lnp: \(message)\n".utf8))
    }

    static func fail(_ failure: StoreFailure) -> ExitCode {
        fail(failure.description + " (lnp leaves it as it is; move it aside to start afresh)")
    }

    static func fail(_ failure: AdministratorFileFailure) -> ExitCode {
        fail("the administrator's decisions are unusable: \(failure)")
    }
}

/// The administrator's file and the person's store, as the commands read them.
enum Decisions {
    static func administrator() throws(ExitCode) -> AdministratorDecisions {
        do {
            return try AdministratorDecisions.load()
        } catch {
            throw Output.fail(error)
        }
    }

    static func store(create: Bool) throws(ExitCode) -> DecisionStore? {
        do {
            return try DecisionStore.open(path: DecisionStore.defaultPath(), create: create)
        } catch {
            throw Output.fail(error)
        }
    }

    /// Decisions are the person's: a program lnp-run runs (or anything it starts, a shell in a
    /// terminal of its own included) cannot allow itself, or anything else. The process tree
    /// decides; an environment that says LNP_RUN (a process that outlived its lnp-run) may
    /// refuse too — what the environment says never allows.
    static func refuseInsideARun() throws(ExitCode) {
        let run = RunAncestors.enclosing().map { "lnp-run pid \($0)" }
            ?? ProgramLocator.environmentValue("LNP_RUN").map { _ in "LNP_RUN is set" }
        guard let run else { return }
        throw Output.fail("decisions are not changed from inside a program lnp-run runs (\(run)); run this outside it")
    }

    static func refusal(_ path: String, _ decision: Decision) -> String {
        guard case .administrator(let file, let line) = decision.source else { return "" }
        return "\(path) is decided by the administrator (\(file):\(line)); a user's decision cannot override it"
    }
}

/// Runs a store operation, turning its failure into `lnp: …` and exit status 1.
func withStore<T>(_ body: () throws(StoreFailure) -> T) throws(ExitCode) -> T {
    do {
        return try body()
    } catch {
        throw Output.fail(error)
    }
}
