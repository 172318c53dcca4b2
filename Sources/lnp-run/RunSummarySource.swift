import LNPReport
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// Where `--summary` finds this run's records when the program has exited: the audit file,
/// from where it ended when the run began; or, with no `--audit`, a file of lnp-run's own in
/// a private directory, removed afterwards.
struct RunSummarySource {
    var path: String
    var offset: UInt64
    /// Set when the file is lnp-run's own.
    var privateDirectory: String?

    /// `auditPath` as prepared by `AuditFile` (absolute; not `syslog`, refused with --summary),
    /// or nil.
    static func prepare(auditPath: String?) throws(Failure) -> RunSummarySource {
        guard let auditPath else {
            let directory = try PrivateDirectory.make(for: "the summary's records")
            let path: String
            do {
                path = try AuditFile.prepare(directory + "/audit.jsonl")  // so that no record still reads as a file
            } catch {
                rmdir(directory)
                throw error
            }
            return RunSummarySource(path: path, offset: 0, privateDirectory: directory)
        }
        var info = stat()
        guard stat(auditPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Failure("--summary reads the run's records back from the audit file, so it must be a regular file: \(auditPath)")
        }
        return RunSummarySource(path: auditPath, offset: UInt64(info.st_size), privateDirectory: nil)
    }

    /// The summary's lines, counting only records of `program`: another run appending to the
    /// same audit file meanwhile is left out, unless it runs the same program.
    func lines(program: String) -> [String] {
        let reading = AuditReader.read(path: path, from: offset)
        discard()
        var lines = RunSummary(entries: reading.entries.filter { $0.program == program }).lines
        if !reading.problems.isEmpty {
            lines.append("lnp: \(reading.problems.count) record(s) could not be read: \(reading.problems[0])")
        }
        return lines
    }

    /// Removes lnp-run's own file and directory, if it made them. A descendant that outlives
    /// lnp-run then finds no directory to write into, and records nothing anywhere.
    func discard() {
        guard let privateDirectory else { return }
        unlink(path)
        rmdir(privateDirectory)
    }
}
