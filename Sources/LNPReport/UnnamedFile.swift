import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A temporary file no other process can open, for what a pipe held (`AuditInput`): made
/// unnamed (O_TMPFILE) in `$TMPDIR`, else in /tmp; where the file system cannot, named by
/// mkstemp and removed at once, in the same places.
enum UnnamedFile {
    /// Where temporary files go: `$TMPDIR`, then /tmp.
    static var directories: [String] {
        let chosen = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 }
        return [chosen, "/tmp"].compactMap { $0 }.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    /// The file, open for reading and writing; or why none could be made, each directory
    /// with its error (`/var/tmp: Read-only file system; /tmp: No space left on device`).
    static func make(in directories: [String] = directories) -> Result<Int32, Failure> {
        for directory in directories {
            // __O_TMPFILE is O_TMPFILE: Swift's Glibc hides the GNU name, not the value.
            let fd = open(directory, __O_TMPFILE | O_RDWR | O_CLOEXEC, 0o600)
            if fd >= 0 { return .success(fd) }
        }
        var errors: [String] = []
        for directory in directories {
            var template = Array((directory + "/lnp-report-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else {
                errors.append("\(directory): \(String(cString: strerror(errno)))")
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            return .success(fd)
        }
        return .failure(Failure(reason: errors.joined(separator: "; ")))
    }

    struct Failure: Error {
        var reason: String
    }
}
