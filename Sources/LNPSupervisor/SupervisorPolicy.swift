import LNPCoreHost

/// What the supervisor needs of the run it serves (lnp-run's `RunLoop`): the run's answer,
/// and where its records go. The supervisor decides what an operation is (the core); the run
/// decides whether it may (its settings, the person's answer).
public protocol SupervisorPolicy: AnyObject {
    /// The answer for process `pid`'s local operation now — `given`, the person's answer to
    /// it, if they have given one — with the errno it fails with if denied; nil while the run
    /// is undetermined (the person is asked: the call waits, `CallSupervisor.Outcome.asks`).
    /// A process of a nested run's tree is also held to that run's policy.
    func decision(for pid: Int32, given: Answer?) -> PolicyDecision?
    /// The errno a denied operation fails with (the run's own).
    var deniedErrno: Int32 { get }
    /// What the records cover.
    var recordScope: RecordScope { get }
    var attribution: Attribution { get }
    /// The program the run was started for, as records name it.
    var program: [UInt8] { get }
    /// Writes one record (a JSON object, without "by": the run adds it) about process `pid`,
    /// with its system-log severity.
    func record(_ line: [UInt8], severity: UInt8, about pid: Int32)
    /// Says one line on stderr about process `pid`: "process PID (EXECUTABLE): what".
    func note(process pid: Int32, _ what: String)
}

/// A notified call's answer, the errno it fails with if denied, and whether it is recorded
/// (by this run, or by the nested run whose tree it comes from).
public struct PolicyDecision {
    public var answer: Answer
    public var errno: Int32
    public var recorded: Bool

    public init(answer: Answer, errno: Int32, recorded: Bool) {
        self.answer = answer
        self.errno = errno
        self.recorded = recorded
    }
}

/// An operation the person must be asked about, as the kernel showed it.
public struct PendingAsk: Sendable {
    public var pid: Int32
    public var operation: Operation
    public var transport: Transport?
    public var endpoint: SocketEndpoint?
    public var reason: LocalReason
}

extension Operation: @unchecked Sendable {}
extension Transport: @unchecked Sendable {}
extension SocketEndpoint: @unchecked Sendable {}
extension LocalReason: @unchecked Sendable {}
