import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Something wrong in what was read: a line that is not a record, or a file that could not
/// be read at all. Never fatal: the other lines and files are still read.
public struct AuditProblem: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The line's number in the whole file (counted from 1), even when reading from an offset.
        case malformedLine(Int)
        case unreadableFile
        /// Nothing in the input was lnp's (`LineParser`): a note, not an error.
        case noRecords
    }

    public var file: String
    public var kind: Kind
    public var message: String

    public init(file: String, kind: Kind, message: String) {
        self.file = file
        self.kind = kind
        self.message = message
    }

    /// `FILE:LINE: what is wrong`, or `FILE: what is wrong`, as compilers say it.
    public var description: String {
        switch kind {
        case .malformedLine(let line): return "\(file):\(line): \(message)"
        case .unreadableFile, .noRecords: return "\(file): \(message)"
        }
    }
}

/// The records read, and what could not be.
public struct AuditReading: Sendable {
    public var entries: [AuditEntry] = []
    public var problems: [AuditProblem] = []

    public init(entries: [AuditEntry] = [], problems: [AuditProblem] = []) {
        self.entries = entries
        self.problems = problems
    }

    public mutating func append(_ other: AuditReading) {
        entries += other.entries
        problems += other.problems
    }

    public var hasUnreadableFile: Bool { problems.contains { $0.kind == .unreadableFile } }
    public var hasMalformedLine: Bool {
        problems.contains {
            if case .malformedLine = $0.kind { return true }
            return false
        }
    }
}

/// Reads audit files: NDJSON, one record a line; and the system log's lines of lnp's records
/// (`lnp[PID]: @cee: {…}`), among other programs' (`LineParser`). Blank lines are skipped; a
/// line that is not a record becomes a problem naming its file and line. Files are read a buffer at a time
/// and each record handed on as it is read, so that reading takes the same memory whatever
/// the file's size; the forms that return an `AuditReading` collect them, for small files.
public enum AuditReader {
    /// How standard input is named in problems.
    public static let standardInputName = "<stdin>"

    /// The records of the file at `path` from byte `offset` on — `lnp-run --summary` reads
    /// only what was appended during its run. The bytes before `offset` are only counted
    /// for line numbers, never kept. A file now shorter than `offset` was replaced or
    /// truncated, and is read whole.
    public static func read(
        path: String, from offset: UInt64 = 0, entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void
    ) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return problem(unreadable(path, errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return problem(unreadable(path, errno)) }
        let skip = offset <= UInt64(max(info.st_size, 0)) ? offset : 0
        read(fd, file: path, skipping: skip, entry: entry, problem: problem)
    }

    public static func readStandardInput(entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void) {
        read(STDIN_FILENO, file: standardInputName, entry: entry, problem: problem)
    }

    public static func read(path: String, from offset: UInt64 = 0) -> AuditReading {
        var reading = AuditReading()
        read(path: path, from: offset, entry: { reading.entries.append($0) }, problem: { reading.problems.append($0) })
        return reading
    }

    public static func readStandardInput() -> AuditReading {
        var reading = AuditReading()
        readStandardInput(entry: { reading.entries.append($0) }, problem: { reading.problems.append($0) })
        return reading
    }

    /// The records of NDJSON text; `firstLine` is the number of its first line in `file`.
    public static func parse(_ bytes: ArraySlice<UInt8>, file: String, firstLine: Int = 1) -> AuditReading {
        var reading = AuditReading()
        let parser = LineParser(file: file)
        var lineNumber = firstLine
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = all[start...].firstIndex(of: 0x0a) ?? all.count
                parser.parse(
                    .text(UnsafeBufferPointer(rebasing: all[start..<end])), lineNumber,
                    entry: { reading.entries.append($0) }, problem: { reading.problems.append($0) })
                lineNumber += 1
                start = end + 1
            }
        }
        parser.finish { reading.problems.append($0) }
        return reading
    }

    /// Reads `fd` to its end: each record to `entry`, each line that is not one, or a failed
    /// read, to `problem`. `copy`, `copyFailure`: see `LineReader`. Returns how many bytes were read.
    @discardableResult
    static func read(
        _ fd: Int32, file: String, skipping skip: UInt64 = 0, limit: UInt64? = nil, copy: Int32? = nil,
        copyFailure: inout Int32?, entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void
    ) -> UInt64 {
        let parser = LineParser(file: file)
        let result = LineReader.read(fd, skipping: skip, limit: limit, copy: copy, copyFailure: &copyFailure) {
            parser.parse($0, $1, entry: entry, problem: problem)
        }
        switch result {
        case .success(let count):
            parser.finish(problem: problem)
            return count
        case .failure(let failure):
            problem(unreadable(file, failure.code))
            return 0
        }
    }

    static func read(
        _ fd: Int32, file: String, skipping skip: UInt64 = 0, entry: (AuditEntry) -> Void,
        problem: (AuditProblem) -> Void
    ) {
        var ignored: Int32?
        read(fd, file: file, skipping: skip, copyFailure: &ignored, entry: entry, problem: problem)
    }

    static func unreadable(_ file: String, _ code: Int32) -> AuditProblem {
        AuditProblem(file: file, kind: .unreadableFile, message: "cannot read: " + String(cString: strerror(code)))
    }
}

/// One line to a record or a problem, with a decoder made once for a whole file (the lines
/// the scanner leaves to it are few, but it is slow to make).
///
/// Lines that are lnp's are records: a line that starts with `{`, or a line of the system log
/// whose message is `@cee: ` and a record (`SystemLogLine`). An input is a system log when the
/// first of these is a line of the log: its other lines are other programs', and skipped.
/// Otherwise it is an audit file, where every line should be a record, and one that is not is
/// named: those before its first record too, once it comes (the first twenty by themselves,
/// the others together: they were not kept, since a log may have thousands before lnp's
/// first line). An input with lines but none of lnp's is said to have no records.
private final class LineParser {
    let file: String
    lazy var decoder = JSONDecoder()
    private var form = Form.undecided
    /// Lines before the first of lnp's that are not records: the first ones, said if the input
    /// turns out to be an audit file; how many more, and the number of the first and last.
    private var waiting: [AuditProblem] = []
    private var moreWaiting = (count: 0, first: 0, last: 0)
    static let waitingKept = 20

    private enum Form { case undecided, audit, log }

    init(file: String) { self.file = file }

    func parse(
        _ line: LineReader.Line, _ number: Int, entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void
    ) {
        let record: UnsafeBufferPointer<UInt8>
        switch line {
        case .tooLong:
            // No record is that long: in a log, another program's line.
            guard form != .log else { return }
            return notRecord(number, problem) { "longer than \(LineReader.longestLine >> 20) MiB, not a record" }
        case .text(let bytes):
            guard let first = Self.start(of: bytes) else { return }
            if bytes[first] == UInt8(ascii: "{") {
                decide(.audit, problem)
                record = bytes
            } else if let logged = SystemLogLine.record(in: bytes) {
                decide(.log, problem)
                record = logged
            } else {
                switch form {
                case .log: return
                case .audit: record = bytes  // read all the same, to say what it lacks
                case .undecided: return notRecord(number, problem) { self.fault(in: bytes) }
                }
            }
        }
        do {
            entry(try AuditEntry.parse(bytes: record, using: decoder))
        } catch {
            problem(AuditProblem(file: file, kind: .malformedLine(number), message: error.message))
        }
    }

    /// Where a line's text starts, past blanks and a byte order mark; nil for a blank line.
    private static func start(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var first = 0
        if bytes.count >= 3 && bytes[0] == 0xef && bytes[1] == 0xbb && bytes[2] == 0xbf { first = 3 }
        while first < bytes.count, bytes[first] == 0x20 || bytes[first] == 0x09 || bytes[first] == 0x0d { first += 1 }
        return first < bytes.count ? first : nil
    }

    /// A line before lnp's first that is not a record: kept to be said if the input is an
    /// audit file (the first few, worded; the rest counted).
    private func notRecord(_ number: Int, _ problem: (AuditProblem) -> Void, _ message: () -> String) {
        if form == .audit { return problem(AuditProblem(file: file, kind: .malformedLine(number), message: message())) }
        if waiting.count < Self.waitingKept {
            return waiting.append(AuditProblem(file: file, kind: .malformedLine(number), message: message()))
        }
        if moreWaiting.count == 0 { moreWaiting.first = number }
        moreWaiting.count += 1
        moreWaiting.last = number
    }

    /// What is wrong with a line that is not a record, in the reader's words.
    private func fault(in bytes: UnsafeBufferPointer<UInt8>) -> String {
        do {
            _ = try AuditEntry.parse(bytes: bytes, using: decoder)
            return "not a record"
        } catch {
            return error.message
        }
    }

    /// What the input is, at its first line of lnp's: an audit file's lines that are not
    /// records are said, a log's are not.
    private func decide(_ decided: Form, _ problem: (AuditProblem) -> Void) {
        guard form == .undecided else { return }
        form = decided
        if decided == .audit {
            waiting.forEach(problem)
            if moreWaiting.count > 0 {
                let more = moreWaiting.count - 1
                problem(AuditProblem(
                    file: file, kind: .malformedLine(moreWaiting.first),
                    message: more == 0 ? "not a record" : "not a record, nor are \(more) more lines to line \(moreWaiting.last)"))
            }
        }
        waiting = []
    }

    /// After the last line: an input with lines but none of lnp's may not be a log at all (a
    /// file named by mistake), so it is said.
    func finish(problem: (AuditProblem) -> Void) {
        guard form == .undecided && (!waiting.isEmpty || moreWaiting.count > 0) else { return }
        problem(AuditProblem(
            file: file, kind: .noRecords,
            message: "no records: none of its lines is an audit record or lnp's in a system log (lnp[PID]: @cee: {…})"))
    }
}
