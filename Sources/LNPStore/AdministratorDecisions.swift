import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The administrator's decisions, for every user: `/etc/lnp/decisions.conf`, one a line —
///
///     # printers may be reached by the print tools
///     allow /usr/bin/lpstat
///     deny /opt/legacy tool/bin/agent
///
/// A line is `allow PATH` or `deny PATH`, the path being the rest of the line after the
/// word and one run of spaces or tabs (so a path may hold spaces) and absolute. Blank lines
/// and lines starting with `#` are ignored; each line is trimmed. Anything else — an unknown
/// word, a relative path, a path decided twice — makes the whole file malformed: lnp then
/// fails closed, never guessing which lines the administrator meant.
public struct AdministratorDecisions: Sendable, Equatable {
    public static let defaultPath = "/etc/lnp/decisions.conf"

    /// The entries in file order; each one's source is `.administrator(file:line:)`.
    public var entries: [Decision]

    public init(entries: [Decision] = []) {
        self.entries = entries
    }

    /// The file at `path`; no file there means no entries.
    public static func load(path: String = defaultPath) throws(AdministratorFileFailure) -> AdministratorDecisions {
        let text: String
        switch readFile(path) {
        case .missing: return AdministratorDecisions()
        case .failed(let reason): throw AdministratorFileFailure(path: path, line: 0, reason: reason)
        case .read(let bytes):
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw AdministratorFileFailure(path: path, line: 0, reason: "not UTF-8 text")
            }
            text = decoded
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(AdministratorFileFailure) -> AdministratorDecisions {
        var entries: [Decision] = []
        var lineOfPath: [String: Int] = [:]
        // "\r\n" is one Character in Swift: both end a line.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, rawLine) in lines.enumerated() {
            let number = index + 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            func malformed(_ reason: String) -> AdministratorFileFailure {
                AdministratorFileFailure(path: path, line: number, reason: reason)
            }
            guard let gap = line.firstIndex(where: isBlank) else {
                throw malformed(Self.expected)
            }
            let word = line[..<gap]
            let target = line[gap...].drop(while: isBlank)
            let state: ProgramState
            switch word {
            case "allow": state = .allowed
            case "deny": state = .denied
            default: throw malformed(Self.expected)
            }
            guard target.hasPrefix("/") else {
                throw malformed("the program must be an absolute path: \(target)")
            }
            guard !target.utf8.contains(0) else { throw malformed("the path holds a NUL character") }
            let program = normalized(String(target))
            if let earlier = lineOfPath[program] {
                throw malformed("\(program) is already decided on line \(earlier)")
            }
            lineOfPath[program] = number
            entries.append(Decision(path: program, state: state, source: .administrator(file: path, line: number)))
        }
        return AdministratorDecisions(entries: entries)
    }

    /// The administrator's decision for the program at `path`, if any.
    public func decision(for path: String) -> Decision? {
        entries.first { $0.path == path }
    }

    /// `path` lexically normalized (`/usr/./bin//x` is `/usr/bin/x`), as lnp names programs;
    /// FilePath only when there is something to normalize (it is the slow part of a parse).
    static func normalized(_ path: String) -> String {
        let components = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        let plain = !path.hasSuffix("/") && !components.contains { component in
            component.isEmpty || component.elementsEqual(".".utf8) || component.elementsEqual("..".utf8)
        }
        return plain ? path : FilePath(path).lexicallyNormalized().string
    }

    static let expected = "expected 'allow PATH' or 'deny PATH'"

    enum FileContents {
        case missing
        case failed(String)
        case read([UInt8])
    }

    /// Reads the whole file with the system's own errors (a missing file, or a missing
    /// /etc/lnp, is no file).
    static func readFile(_ path: String) -> FileContents {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            return .failed(errorText(errno))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(errorText(errno))
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
            if bytes.count > 16 << 20 { return .failed("larger than 16 MiB") }
        }
        return .read(bytes)
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}

/// The administrator's file cannot be used: lnp fails closed.
public struct AdministratorFileFailure: Error, Equatable, CustomStringConvertible {
    public var path: String
    /// The line at fault, from 1; 0 when it is the whole file (unreadable, not text).
    public var line: Int
    public var reason: String

    public init(path: String, line: Int, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    /// `/etc/lnp/decisions.conf:3: expected 'allow PATH' or 'deny PATH'`
    public var description: String {
        line > 0 ? "\(path):\(line): \(reason)" : "\(path): \(reason)"
    }
}

private func isBlank(_ character: Character) -> Bool {
    character == " " || character == "\t"
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map(index(after:)) ?? start
        return self[start..<Swift.max(start, end)]
    }
}
