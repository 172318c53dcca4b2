import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One input of `lnp report`: a file, or standard input (`-`). The table and Apple's records
/// read it once. The HTML page reads it twice, the second time for its timelines
/// (`Timelines`): a file or redirected input is read again from where the first reading
/// started to where it ended (an audit file still being written may have grown since); what
/// cannot be read twice (a pipe) is copied during the first reading into an unnamed temporary
/// file (`UnnamedFile`), so that memory stays the same whatever the size. An input that could
/// not be read again says why, and the page shows its programs without a timeline.
///
/// A file is open only while it is read, so that a report can cover more files than a process
/// may have open at once; the second reading opens it again by its path, and reads it only if
/// it is still the same file (an audit file rotated in between is not).
public final class AuditInput {
    /// The file's path, or `<stdin>`.
    public let name: String
    /// Nil for standard input, which is open already and stays open.
    private let path: String?
    /// Whether the first reading could open the input: if not, it said so.
    private var opened = false
    /// The file the first reading read, to know it again.
    private var identity: (device: dev_t, inode: ino_t)?
    /// Where the first reading started; nil when the input cannot seek (a pipe).
    private var start: off_t?
    private var length: UInt64 = 0
    /// The copy of what could not be read twice, or why it could not be made or written.
    private var copy: Int32 = -1
    private var copyFailure: String?
    /// The programs of the records read, when read twice: an input not read again leaves
    /// their timelines short.
    public private(set) var programs: Set<String> = []

    /// `-` for standard input.
    public init(path: String) {
        name = path == "-" ? AuditReader.standardInputName : path
        self.path = path == "-" ? nil : path
    }

    deinit {
        if copy >= 0 { close(copy) }
    }

    /// Reads the input: each record to `entry`, each line that is not one (or a failure to
    /// read) to `problem`. `twice`: keep what a second reading needs.
    public func read(twice: Bool, entry: (AuditEntry) -> Void, problem: (AuditProblem) -> Void) {
        let fd: Int32
        switch open() {
        case .success(let opened): fd = opened
        case .failure(let failure): return problem(AuditReader.unreadable(name, failure.code))
        }
        defer { closeIfOwned(fd) }
        opened = true
        var info = stat()
        if fstat(fd, &info) == 0 { identity = (info.st_dev, info.st_ino) }
        let position = lseek(fd, 0, SEEK_CUR)
        start = position >= 0 ? position : nil
        if twice && start == nil {
            switch UnnamedFile.make() {
            case .success(let made): copy = made
            case .failure(let failure): copyFailure = failure.reason
            }
        }
        var writeError: Int32?
        var last: String?
        length = AuditReader.read(
            fd, file: name, copy: copy >= 0 ? copy : nil, copyFailure: &writeError,
            entry: { record in
                // Records of one program often come in runs: the set is looked up once a run.
                if twice && record.program != last {
                    programs.insert(record.program)
                    last = record.program
                }
                entry(record)
            }, problem: problem)
        if let writeError { copyFailure = String(cString: strerror(writeError)) }
    }

    /// Reads again what `read` read, records only: its problems were reported then. Returns
    /// nil, or why it could not be read again.
    public func readAgain(entry: (AuditEntry) -> Void) -> String? {
        guard opened else { return nil }
        guard let start else { return readCopy(entry: entry) }
        let fd: Int32
        switch open() {
        case .success(let opened): fd = opened
        case .failure(let failure): return reason(failure.code)
        }
        defer { closeIfOwned(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return reason(errno) }
        guard let identity, identity == (info.st_dev, info.st_ino) else { return "it was replaced between the two readings" }
        guard lseek(fd, start, SEEK_SET) >= 0 else { return reason(errno) }
        var ignored: Int32?
        AuditReader.read(fd, file: name, limit: length, copyFailure: &ignored, entry: entry, problem: { _ in })
        return nil
    }

    private func readCopy(entry: (AuditEntry) -> Void) -> String? {
        if let copyFailure { return "it could not be kept for a second reading (\(copyFailure))" }
        guard copy >= 0, lseek(copy, 0, SEEK_SET) >= 0 else { return reason(errno) }
        var ignored: Int32?
        AuditReader.read(copy, file: name, limit: length, copyFailure: &ignored, entry: entry, problem: { _ in })
        return nil
    }

    private func open() -> Result<Int32, LineReader.Failure> {
        guard let path else { return .success(STDIN_FILENO) }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? .success(fd) : .failure(LineReader.Failure(code: errno))
    }

    private func closeIfOwned(_ fd: Int32) {
        if path != nil { close(fd) }
    }

    private func reason(_ code: Int32) -> String {
        "it could not be read a second time (\(String(cString: strerror(code))))"
    }
}
