import LNPTools

/// Records of this run that could not be written, by why. lnp-run says so on stderr when the
/// program ends (and in `--summary`), and the next record it writes notes the gap.
struct LostRecords: Equatable {
    enum Reason: Hashable {
        /// Processes of the program could not send them to lnp-run (no descriptor left,
        /// lnp-run's queue full for a second).
        case notSent
        /// The audit file could not be written (ENOSPC, EIO, …).
        case write(Int32)
        /// The file size limit (RLIMIT_FSIZE) would have been passed.
        case sizeLimit
        /// The audit file was removed while the program ran.
        case fileRemoved
        /// The pipe's reader did not keep up.
        case slowReader
        /// No process reads the pipe any more.
        case readerGone
        /// The system logger did not keep up, or cannot be reached.
        case logger(Int32)

        var words: String {
            switch self {
            case .notSent: return "processes of the program could not send them to lnp-run (no descriptor left, or lnp-run kept busy)"
            case .write(let error): return "the audit file could not be written: \(ErrnoName.description(of: error))"
            case .sizeLimit: return "the file size limit (RLIMIT_FSIZE) was reached"
            case .fileRemoved: return "the audit file was removed"
            case .slowReader: return "the pipe's reader did not keep up"
            case .readerGone: return "no process reads the pipe any more"
            case .logger(let error): return "the system logger did not take them: \(ErrnoName.description(of: error))"
            }
        }
    }

    /// Counts in the order the reasons first occurred.
    private(set) var counts: [(reason: Reason, count: Int)] = []
    /// Lost since the last record written, and the last reason: the gap the next one notes.
    private(set) var unnoted = 0
    private var lastReason: Reason? = nil

    var total: Int { counts.reduce(0) { $0 + $1.count } }

    mutating func add(_ count: Int, _ reason: Reason) {
        guard count > 0 else { return }
        if let index = counts.firstIndex(where: { $0.reason == reason }) {
            counts[index].count += count
        } else {
            counts.append((reason, count))
        }
        unnoted += count
        lastReason = reason
    }

    /// The gap the next record written notes (`"lost":{"count":N,"because":"…"}`).
    var gap: (count: Int, because: String)? {
        guard unnoted > 0, let lastReason else { return nil }
        return (unnoted, lastReason.words)
    }

    /// A record noting the gap was written: the next one need not.
    mutating func gapNoted() { unnoted = 0 }

    /// What lnp-run says at the end: one line per reason.
    var lines: [String] {
        counts.map { "\($0.count) record(s) of this run were lost: \($0.reason.words)" }
    }

    static func == (a: LostRecords, b: LostRecords) -> Bool {
        a.counts.map(\.count) == b.counts.map(\.count) && a.counts.map(\.reason) == b.counts.map(\.reason)
            && a.unnoted == b.unnoted
    }
}
