#if canImport(Glibc)
import Glibc
#endif

/// What was decided for a program.
public enum ProgramState: String, Codable, Sendable {
    case allowed, denied
}

/// Who decided.
public enum DecisionSource: Equatable, Sendable {
    /// The person, in their own store.
    case user
    /// The administrator, in the system-wide file, at this line.
    case administrator(file: String, line: Int)
}

/// One decided program.
public struct Decision: Equatable, Sendable {
    /// The program's absolute path (for a script, the script).
    public var path: String
    /// The program's build-id when it was decided; nil for scripts, binaries without one, and
    /// administrator entries.
    public var buildID: String?
    public var state: ProgramState
    /// When the person decided, in seconds since 1970 (UTC); nil for administrator entries.
    public var decidedAt: Double?
    /// When a program run under lnp-run last used this decision, in seconds since 1970.
    public var lastUsed: Double?
    public var source: DecisionSource

    public init(
        path: String, buildID: String? = nil, state: ProgramState, decidedAt: Double? = nil, lastUsed: Double? = nil,
        source: DecisionSource
    ) {
        self.path = path
        self.buildID = buildID
        self.state = state
        self.decidedAt = decidedAt
        self.lastUsed = lastUsed
        self.source = source
    }
}

/// The time of day as the store keeps it: seconds since 1970, to the microsecond.
public enum StoreClock {
    public static func now() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec / 1000) / 1_000_000
    }
}
