#if canImport(Glibc)
import Glibc
#endif

/// The lines of what a descriptor holds, a buffer at a time: a report's memory stays the same
/// whatever the size of the audit file it reads.
package struct LineReader {
    /// What one `read` asks for; the buffer grows, up to `longestLine` and its newline, only
    /// for a longer line.
    static let chunk = 1 << 16
    /// Longer than any record (the preload's are at most 3,800 bytes): a longer line is not
    /// read but reported, so that a file without newlines cannot take the memory a whole
    /// file would.
    static let longestLine = 1 << 20
    /// The buffer at its largest: a line of `longestLine` bytes, and its newline.
    private static let largest = longestLine + 1

    enum Line {
        case text(UnsafeBufferPointer<UInt8>)
        case tooLong
    }

    struct Failure: Error { var code: Int32 }

    /// Reads `fd` to its end, or for `limit` bytes, and calls `line` with each line (its
    /// newline left out) and its number, from 1. The first `skip` bytes
    /// are only counted for line numbers. Each buffer read is written to `copy` as well, when
    /// given (standard input kept for a second reading); a failed write there only sets
    /// `copyFailure`. Returns how many bytes were read.
    static func read(
        _ fd: Int32, skipping skip: UInt64 = 0, limit: UInt64? = nil, copy: Int32? = nil,
        copyFailure: inout Int32?, line: (Line, Int) -> Void
    ) -> Result<UInt64, Failure> {
        var capacity = chunk
        var buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var filled = 0  // bytes in the buffer
        var number = 1
        var total: UInt64 = 0
        var discarding = false  // within a line longer than longestLine

        while true {
            if filled == capacity {
                if capacity < largest {
                    let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: min(capacity * 2, largest))
                    memcpy(larger.baseAddress!, buffer.baseAddress!, filled)
                    buffer.deallocate()
                    buffer = larger
                    capacity = larger.count
                } else {
                    discarding = true
                    filled = 0
                }
            }
            var want = capacity - filled
            if let limit { want = Int(min(UInt64(want), limit - total)) }
            if want == 0 { break }
            let count = Glibc.read(fd, buffer.baseAddress! + filled, want)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(Failure(code: errno))
            }
            if count == 0 { break }
            if let copy, copyFailure == nil {
                let read = UnsafeMutableBufferPointer(rebasing: buffer[filled..<filled + count])
                copyFailure = writeAll(copy, UnsafeRawBufferPointer(read))
            }
            total += UInt64(count)
            var start = 0
            var end = filled + count
            // Bytes before `skip` are counted, never read as lines.
            let skipped = total - UInt64(count)
            if skipped < skip {
                let here = Int(min(UInt64(count), skip - skipped))
                for byte in buffer[filled..<filled + here] where byte == 0x0a {
                    number += 1
                }
                start = filled + here
                if start == end {
                    filled = 0
                    continue
                }
                // Only bytes after the skip are kept; nothing before them was in the buffer.
                start = 0
                end = count - here
                memmove(buffer.baseAddress!, buffer.baseAddress! + filled + here, end)
            }
            var scanned = max(filled, start)
            while let newline = memchr(buffer.baseAddress! + scanned, 0x0a, end - scanned) {
                let at = UnsafeMutableRawPointer(buffer.baseAddress!).distance(to: newline)
                if discarding {
                    line(.tooLong, number)
                    discarding = false
                } else {
                    line(.text(bytes(buffer, start..<at)), number)
                }
                number += 1
                start = at + 1
                scanned = start
            }
            if discarding {
                filled = 0
                continue
            }
            if start > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + start, end - start) }
            filled = end - start
        }
        if discarding {
            line(.tooLong, number)
        } else if filled > 0 {
            line(.text(bytes(buffer, 0..<filled)), number)
        }
        return .success(total)
    }

    private static func bytes(_ buffer: UnsafeMutableBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: buffer[range])
    }

    /// The error of writing `bytes` to `fd`, or nil when all were written. `package`: `lnp
    /// report` writes its output with it too.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}
