#if canImport(Glibc)
import Glibc
#endif
import LNPReport

/// Standard output for a report written line by line: kept in a buffer and written when it
/// holds 64 kB, so that a long report is neither held whole nor written a line per call.
struct ReportOutput {
    private var buffer: [UInt8] = []
    /// Why a write failed (`lnp report > /dev/full`); nothing more is written after it.
    private(set) var failure: Int32?
    private static let size = 1 << 16

    init() { buffer.reserveCapacity(Self.size + 4096) }

    mutating func line(_ text: String) {
        buffer += text.utf8
        buffer.append(0x0a)
        if buffer.count >= Self.size { flush() }
    }

    mutating func line(_ bytes: [UInt8]) {
        buffer += bytes
        buffer.append(0x0a)
        if buffer.count >= Self.size { flush() }
    }

    mutating func write(_ text: String) {
        buffer += text.utf8
        if buffer.count >= Self.size { flush() }
    }

    mutating func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil else { return }
        failure = buffer.withUnsafeBytes { LineReader.writeAll(STDOUT_FILENO, $0) }
    }
}
