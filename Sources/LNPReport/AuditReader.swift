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
        case .unreadableFile: return "\(file): \(message)"
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
    public var hasMalformedLine: Bool { problems.contains { $0.kind != .unreadableFile } }
}

/// Reads audit files: NDJSON, one record a line. Blank lines are skipped; a line that is
/// not a record becomes a problem naming its file and line. Files are read a buffer at a time
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
        case .success(let count): return count
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
private final class LineParser {
    let file: String
    lazy var decoder = JSONDecoder()

    init(file: String) { self.file = file }

    func parse(
        _ line: LineReader.Line, _ number: Int, entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void
    ) {
        switch line {
        case .tooLong:
            let message = "longer than \(LineReader.longestLine >> 20) MiB, not a record"
            problem(AuditProblem(file: file, kind: .malformedLine(number), message: message))
        case .text(let bytes):
            guard !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0d }) else { return }
            do {
                entry(try AuditEntry.parse(bytes: bytes, using: decoder))
            } catch {
                problem(AuditProblem(file: file, kind: .malformedLine(number), message: error.message))
            }
        }
    }
}
