import Foundation

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
    /// When the person decided; nil for administrator entries.
    public var decidedAt: Date?
    /// When a program run under lnp-run last used this decision.
    public var lastUsed: Date?
    public var source: DecisionSource

    public init(
        path: String, buildID: String? = nil, state: ProgramState, decidedAt: Date? = nil, lastUsed: Date? = nil,
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
