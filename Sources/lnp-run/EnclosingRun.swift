import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The lnp-run this one runs under, if any: `lnp-run --deny -- make`, whose Makefile runs
/// `lnp-run --allow -- tool`. A nested lnp-run only narrows: it registers with the enclosing
/// one (which checks it is its own process, running the same lnp-run), takes the enclosing
/// one's decision for it as a bound, passes its records up, and lets the enclosing one answer
/// what it would allow. Found as the preload finds lnp-run: the one `LNP_RUN` names, else the
/// nearest ancestor that answers.
struct EnclosingRun {
    var pid: pid_t
    /// The enclosing run's settings for this process (a process of its tree).
    var decision: Decision
    var asking: AskMode
    var basis: DecisionBasis
    var errno: Int32
    var records: RecordScope
    /// The Bonjour service types declared there, which bound this run's.
    var bonjour: BonjourDeclaration = .undeclared

    /// An lnp-run among this one's ancestors that will not take it as nested (another lnp-run
    /// executable, say) is no reason to run unwatched: lnp-run refuses to start.
    static func find(hint: String?) throws(Failure) -> EnclosingRun? {
        let ancestors = RunAncestors.ancestors()
        for candidate in RunAncestors.candidates(hint: hint, ancestors: ancestors) {
            switch register(with: candidate) {
            case .registered(let run) where RunChannel.isVouchedFor(candidate): return run
            case .registered: continue  // a process of the program posing as lnp-run
            case .refused where ancestors.contains(candidate):
                throw Failure("lnp-run \(candidate) runs this one but does not take it as nested (is it another lnp-run "
                    + "executable?); refusing to run the program outside its watch")
            case .refused, .absent: continue
            }
        }
        return nil
    }

    private enum Registration {
        case registered(EnclosingRun)
        /// An lnp-run answered, but not with settings for this one.
        case refused
        case absent
    }

    private static func register(with pid: pid_t) -> Registration {
        guard let reply = request("nested", of: pid) else { return .absent }
        guard let settings = reply.withUnsafeBufferPointer({ Settings.fromReply($0) }) else { return .refused }
        return .registered(EnclosingRun(
            pid: pid, decision: settings.decision, asking: settings.asking, basis: settings.basis, errno: settings.errno,
            records: settings.records, bonjour: declaredServices(of: pid)))
    }

    /// The run's `services` reply; a run that does not answer declares nothing narrower.
    private static func declaredServices(of pid: pid_t) -> BonjourDeclaration {
        guard let reply = request("services", of: pid), reply.starts(with: Array("ok\n".utf8)) else { return .undeclared }
        return BonjourDeclaration(wire: String(decoding: reply.dropFirst(3), as: UTF8.self))
    }

    /// lnp-run `pid`'s reply to `text`, or nil if it did not answer.
    private static func request(_ text: String, of pid: pid_t) -> ArraySlice<UInt8>? {
        var reply = [UInt8](repeating: 0, count: 4200)
        let count = Array(text.utf8).withUnsafeBytes { message in
            reply.withUnsafeMutableBytes { RunChannel.request(message, to: Int32(pid), reply: $0) }
        }
        return count.map { reply[0..<$0] }
    }

    /// This run's policy, narrowed by the enclosing run's: a decided denial there denies
    /// here, with its reason and errno; an allowance there leaves this run's own; while the
    /// enclosing program is undetermined, what this run would allow is asked there too
    /// (`asksUp`).
    func narrow(_ settings: inout LaunchSettings) -> (asksUp: Bool, note: String?) {
        settings.bonjour = settings.bonjour.narrowed(by: bonjour)
        switch (asking, decision) {
        case (.never, .deny):
            let changed = settings.decision != .deny
            settings.decision = .deny
            settings.basis = basis
            settings.errno = errno
            return (false, changed ? "the enclosing lnp-run (pid \(pid)) denies local-network access; this run cannot allow it" : nil)
        case (.never, .allow):
            return (false, nil)
        default:
            guard settings.decision != .deny else { return (false, nil) }
            if settings.decision == .allow { settings.decision = asking == .denyingWhileAsking ? .askDeny : .ask }
            return (true, nil)
        }
    }
}
