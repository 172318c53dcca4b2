import LNPCoreHost

/// What the supervisor needs of the run it serves (lnp-run's `RunLoop`): the run's answer,
/// and where its records go. The supervisor decides what an operation is (the core); the run
/// decides whether it may (its settings, the person's answer).
public protocol SupervisorPolicy: AnyObject {
    /// The answer for the run's local operations now; nil while it is undetermined (the
    /// person is asked: the call waits, `CallSupervisor.Outcome.asks`).
    func answer() -> Answer?
    /// The errno a denied operation fails with.
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
