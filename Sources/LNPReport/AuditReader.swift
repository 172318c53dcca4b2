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
/// not a record becomes a problem naming its file and line.
public enum AuditReader {
    /// How standard input is named in problems.
    public static let standardInputName = "<stdin>"

    /// The records of the file at `path` from byte `offset` on — `lnp-run --summary` reads
    /// only what was appended during its run. The bytes before `offset` are only counted
    /// for line numbers, never kept. A file now shorter than `offset` was replaced or
    /// truncated, and is read whole.
    public static func read(path: String, from offset: UInt64 = 0) -> AuditReading {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return unreadable(path, errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return unreadable(path, errno) }
        let skip = offset <= UInt64(max(info.st_size, 0)) ? Int(offset) : 0
        switch readAll(fd, skipping: skip) {
        case .failure(let error): return unreadable(path, error.code)
        case .success(let read): return parse(read.bytes[...], file: path, firstLine: read.linesSkipped + 1)
        }
    }

    public static func readStandardInput() -> AuditReading {
        switch readAll(STDIN_FILENO) {
        case .failure(let error): return unreadable(standardInputName, error.code)
        case .success(let read): return parse(read.bytes[...], file: standardInputName)
        }
    }

    /// The records of NDJSON text; `firstLine` is the number of its first line in `file`.
    public static func parse(_ bytes: ArraySlice<UInt8>, file: String, firstLine: Int = 1) -> AuditReading {
        var reading = AuditReading()
        let decoder = JSONDecoder()
        var lineNumber = firstLine
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 0x0a) ?? bytes.endIndex
            let line = bytes[start..<end]
            if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0d }) {
                do {
                    reading.entries.append(try AuditEntry.parse(line: line, using: decoder))
                } catch {
                    reading.problems.append(AuditProblem(file: file, kind: .malformedLine(lineNumber), message: error.message))
                }
            }
            lineNumber += 1
            start = end + 1
        }
        return reading
    }

    private static func unreadable(_ file: String, _ code: Int32) -> AuditReading {
        let message = "cannot read: " + String(cString: strerror(code))
        return AuditReading(problems: [AuditProblem(file: file, kind: .unreadableFile, message: message)])
    }

    private struct ReadError: Error { var code: Int32 }

    /// Everything from `fd` after its first `skip` bytes, and how many lines those held.
    private static func readAll(_ fd: Int32, skipping skip: Int = 0)
        -> Result<(bytes: [UInt8], linesSkipped: Int), ReadError>
    {
        var bytes: [UInt8] = []
        var skipped = 0
        var lines = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return .success((bytes, lines)) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadError(code: errno))
            }
            let skipHere = min(count, skip - skipped)
            for byte in chunk[..<skipHere] where byte == 0x0a { lines += 1 }
            skipped += skipHere
            bytes += chunk[skipHere..<count]
        }
    }
}
