import LNPCoreHost
import LNPSupervisor

#if canImport(Glibc)
import Glibc
#endif

/// A nested lnp-run only narrows: a call of its tree that this run's supervisor is notified
/// of (a static program's, say: the nested run has no filter of its own below this one's)
/// must be allowed by the nested run's policy too. Its settings as they stand are asked of it
/// at each such call, through its channel (it answers its enclosing run).
enum NestedRunPolicy {
    /// `own` (this run's decision), narrowed by the policy of nested run `run`, and recorded
    /// if either run records.
    static func narrow(_ own: PolicyDecision, by run: pid_t, note: (String) -> Void) -> PolicyDecision {
        guard let theirs = settings(of: run) else {
            note("its lnp-run (pid \(run)) did not answer; its call is denied")
            return PolicyDecision(answer: Answer(decision: .deny, basis: .noSupervisor, isFinal: false), errno: own.errno,
                                  recorded: own.recorded)
        }
        var narrowed = own
        narrowed.recorded = own.recorded || theirs.records != .none
        guard own.answer.decision == .allow else { return narrowed }
        switch (theirs.asking, theirs.decision) {
        case (.never, .allow): break
        case (.never, .deny):
            narrowed.answer = Answer(decision: .deny, basis: theirs.basis, isFinal: true)
            narrowed.errno = theirs.errno
        default:
            // Undetermined there: denied while its person is asked (the call cannot wait on
            // another run's prompt), as Apple's systems deny while they ask.
            narrowed.answer = Answer(decision: .deny, basis: .asking, isFinal: false)
            narrowed.errno = theirs.errno
        }
        return narrowed
    }

    private static func settings(of run: pid_t) -> (decision: Decision, asking: AskMode, basis: DecisionBasis, errno: Int32, records: RecordScope)? {
        var reply = [UInt8](repeating: 0, count: 4200)
        let request = Array("settings".utf8)
        guard let count = request.withUnsafeBytes({ message in
            reply.withUnsafeMutableBytes { RunChannel.request(message, to: Int32(run), reply: $0) }
        }) else { return nil }
        return reply[0..<count].withUnsafeBufferPointer { bytes in
            Settings.fromReply(bytes).map { ($0.decision, $0.asking, $0.basis, $0.errno, $0.records) }
        }
    }
}
