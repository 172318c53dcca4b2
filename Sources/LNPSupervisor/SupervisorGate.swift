import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The supervisor's gate (`CallGate`): a notified call's local operation, decided by the run
/// (`SupervisorPolicy`) and recorded by lnp-run with the pid the kernel named and the
/// executable /proc names. The socket is lnp-run's copy of the program's (`fd` in the core's
/// calls); records name the program's own descriptor number.
struct SupervisorGate: CallGate {
    /// What one call's decision leaves behind.
    final class Outcome {
        /// Set when the run is undetermined: the call waits for the person's answer.
        var ask: PendingAsk?
    }

    /// Returned in place of an errno when the call must wait for an answer.
    static let waitsForAnswer: Int32 = -1

    let process: NotifiedProcess
    var pid: Int32 { process.pid }
    let programFD: Int32
    let policy: SupervisorPolicy
    /// The answer to use, when the call is decided again once the person has answered.
    let given: Answer?
    let outcome: Outcome
    /// The socket lives in another network namespace than lnp-run's, entered for the decision:
    /// its routes are asked there, never taken from the cache of lnp-run's own.
    var inOtherNamespace = false

    func classifier(leaving outputInterface: UInt32) -> Classifier<KernelRoutes, LiveExemptions> {
        Classifier(routes: KernelRoutes(outputInterface: outputInterface, cached: !inOtherNamespace), exemptions: LiveExemptions())
    }

    /// The socket's family (lnp-run has asked it already).
    var socketDomain: Int32 = 0

    /// The supervisor asks the socket itself: a call it is notified of is rare enough.
    var mayForceEgress: Bool { true }
    func forcedInterface(of fd: Int32) -> UInt32 { SocketEgress.forcedInterface(fd, domain: socketDomain) }
    func noteForcedEgress() {}
    var mayWriteHeaders: Bool { true }
    var recordsAllActivity: Bool { policy.recordScope == .all }

    func decide(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason
    ) -> Int32 {
        guard let decided = policy.decision(for: pid, given: given) else {
            outcome.ask = PendingAsk(pid: pid, operation: operation, transport: transport, endpoint: endpoint, reason: reason)
            return Self.waitsForAnswer
        }
        if decided.recorded {
            record(operation, hasSocket: fd != nil, transport: transport, endpoint: endpoint, verdict: .local(reason),
                   decision: decided.answer.decision, basis: decided.answer.basis)
        }
        return decided.answer.decision == .allow ? 0 : decided.errno
    }

    func recordActivity(_ operation: Operation, fd: Int32, transport: Transport, endpoint: SocketEndpoint, reason: NotLocalReason) {
        guard policy.recordScope == .all else { return }
        record(operation, hasSocket: true, transport: transport, endpoint: endpoint, verdict: .notLocal(reason),
               decision: .allow, basis: .notLocal)
    }

    private func record(
        _ operation: Operation, hasSocket: Bool, transport: Transport?, endpoint: SocketEndpoint?, verdict: Verdict,
        decision: Decision, basis: DecisionBasis
    ) {
        let executable = ProcFiles.executable(of: pid) ?? Array("(gone)".utf8)
        let program = policy.program
        var scope = InterfaceName()
        if case .local(.linkLocal(let index)) = verdict, index != 0 { scope = InterfaceLookup.name(of: index) }
        var severity: UInt8 = 0
        let line: [UInt8] = executable.withUnsafeBufferPointer { executable in
            program.withUnsafeBufferPointer { program in
                let record = AuditRecord(
                    time: Clock.now(), pid: pid, program: program, executable: executable, operation: operation,
                    fd: hasSocket ? programFD : nil, transport: transport, endpoint: endpoint,
                    host: UnsafeBufferPointer(start: nil, count: 0), domains: UnsafeBufferPointer(start: nil, count: 0),
                    verdict: verdict, scopeName: scope, decision: decision, basis: basis, attribution: policy.attribution)
                severity = RecordDatagram.severity(of: record)
                var buffer = [UInt8](repeating: 0, count: record.budgets.lineCapacity)
                let count = buffer.withUnsafeMutableBytes { raw in
                    var writer = ByteWriter(raw)
                    record.write(to: &writer)
                    return writer.count
                }
                return Array(buffer[0..<count])
            }
        }
        policy.record(line, severity: severity, about: pid)
    }
}
