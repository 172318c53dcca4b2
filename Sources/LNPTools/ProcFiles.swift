#if canImport(Glibc)
import Glibc
#endif

/// What /proc says of a process: its executable, its command name, the fields of its status.
/// One reader for lnp-run's identities (asks, records, ancestors) and the supervisor's.
public enum ProcFiles {
    /// The executable's path as the kernel has it: bytes, which need not be UTF-8. nil when
    /// the process is gone or closed to the reader (non-dumpable).
    public static func executable(of pid: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBytes { readlink("/proc/\(pid)/exe", $0.baseAddress!, $0.count - 1) }
        return count > 0 ? Array(buffer[0..<count]) : nil
    }

    /// The command name (`comm`, at most 15 bytes): readable even when the executable is not.
    public static func commandName(of pid: Int32) -> String? {
        guard let bytes = read("/proc/\(pid)/comm", limit: 64), !bytes.isEmpty else { return nil }
        return String(decoding: bytes.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    /// The fields named `keys` of /proc/THREAD/status (`thread-self` when nil), each split at
    /// blanks: `["Tgid": ["4242"]]`. nil when it cannot be read.
    public static func status(of thread: Int32?, _ keys: Set<String>) -> [String: [Substring]]? {
        fields(read(thread.map { "/proc/\($0)/status" } ?? "/proc/thread-self/status"), keys)
    }

    private static func fields(_ bytes: [UInt8]?, _ keys: Set<String>) -> [String: [Substring]]? {
        guard let bytes else { return nil }
        var fields: [String: [Substring]] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), keys.contains(String(line[..<colon])) else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
        }
        return fields
    }

    /// The same fields of thread `thread` of process `pid`.
    public static func status(ofThread thread: Int32, in pid: Int32, _ keys: Set<String>) -> [String: [Substring]]? {
        fields(read("/proc/\(pid)/task/\(thread)/status"), keys)
    }

    /// A small file of /proc, whole (up to `limit` bytes).
    public static func read(_ path: String, limit: Int = 65_536) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
