import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One input of `lnp report`: a file, or standard input (`-`). The table and Apple's records
/// read it once. The HTML page reads it twice, the second time for its timelines
/// (`Timelines`): a file or redirected input is read again from where the first reading
/// started to where it ended (an audit file still being written may have grown since); what
/// cannot be read twice (a pipe) is copied during the first reading into an unnamed temporary
/// file, so that memory stays the same whatever the size.
public final class AuditInput {
    /// The file's path, or `<stdin>`.
    public let name: String
    private let fd: Int32
    private let ownsDescriptor: Bool
    private var openError: Int32?
    /// Where the first reading started; nil when the input cannot seek (a pipe).
    private var start: off_t?
    private var length: UInt64 = 0
    /// The copy of what could not be read twice, or why it could not be made.
    private var copy: Int32 = -1
    private var copyError: Int32?

    /// `-` for standard input.
    public init(path: String) {
        if path == "-" {
            name = AuditReader.standardInputName
            fd = STDIN_FILENO
            ownsDescriptor = false
        } else {
            name = path
            fd = open(path, O_RDONLY | O_CLOEXEC)
            ownsDescriptor = true
            if fd < 0 { openError = errno }
        }
    }

    deinit {
        if ownsDescriptor && fd >= 0 { close(fd) }
        if copy >= 0 { close(copy) }
    }

    /// Reads the input: each record to `entry`, each line that is not one (or a failure to
    /// read) to `problem`. `twice`: keep what a second reading needs.
    public func read(twice: Bool, entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void) {
        if let openError { return problem(AuditReader.unreadable(name, openError)) }
        let position = lseek(fd, 0, SEEK_CUR)
        start = position >= 0 ? position : nil
        if twice && start == nil { makeCopy() }
        length = AuditReader.read(
            fd, file: name, copy: copy >= 0 ? copy : nil, copyFailure: &copyError, entry: entry, problem: problem)
    }

    /// Reads again what `read` read, records only: its problems were reported then. Returns
    /// nil, or why it could not be read again.
    public func readAgain(entry: (AuditEntry) -> Void) -> String? {
        guard openError == nil else { return nil }
        let source: Int32
        if let start {
            guard lseek(fd, start, SEEK_SET) >= 0 else { return reason(errno) }
            source = fd
        } else {
            if let copyError { return reason(copyError) }
            guard copy >= 0, lseek(copy, 0, SEEK_SET) >= 0 else { return reason(errno) }
            source = copy
        }
        var ignored: Int32?
        AuditReader.read(source, file: name, limit: length, copyFailure: &ignored, entry: entry, problem: { _ in })
        return nil
    }

    private func reason(_ code: Int32) -> String {
        "\(name) (it could not be read a second time: \(String(cString: strerror(code))))"
    }

    /// An unnamed file in `$TMPDIR` (or /tmp), for what standard input holds.
    private func makeCopy() {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/lnp-report-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard made >= 0 else {
            copyError = errno
            return
        }
        _ = fcntl(made, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        copy = made
    }
}
