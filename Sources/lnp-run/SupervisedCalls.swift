import LNPCoreHost
import LNPSupervisor
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The run as the supervisor's policy: notified calls are decided by the same settings and
/// the same person's answer as the preload's asks, and recorded by this run.
extension RunLoop: SupervisorPolicy {
    func decision(for pid: Int32, given: Answer?) -> PolicyDecision? {
        guard let own = given ?? answer() else { return nil }
        let recorded = settings.records != .none
        guard let nested = tree.nestedRun(governing: pid) else {
            return PolicyDecision(answer: own, errno: settings.errno, recorded: recorded)
        }
        return NestedRunPolicy.narrow(PolicyDecision(answer: own, errno: settings.errno, recorded: recorded), by: nested,
                                      note: { note(process: pid, $0) })
    }

    /// This run's answer now; nil while undetermined.
    private func answer() -> Answer? {
        let current = currentSettings
        let answer: Answer
        switch current.decision {
        case .allow: answer = Answer(decision: .allow, basis: current.basis, isFinal: true)
        case .deny: return Answer(decision: .deny, basis: current.basis, isFinal: true)
        case .ask, .askDeny:
            guard case .reply(let reply) = state.action(forAskHolding: current.decision == .ask) else { return nil }
            answer = reply
        }
        // What this run allows, the enclosing run must allow too: asked there.
        return answer.decision == .allow && upstream != nil ? nil : answer
    }

    var deniedErrno: Int32 { settings.errno }
    var recordScope: RecordScope { settings.records }
    var attribution: Attribution { settings.attribution == "user" ? .user : .app }
    var program: [UInt8] { Array(settings.program.utf8) }

    func record(_ line: [UInt8], severity: UInt8, about pid: Int32) {
        records.receiveSupervised(line, severity: severity, about: pid, nestedRun: tree.nestedRun(governing: pid))
    }

    func note(process pid: Int32, _ what: String) {
        // A process closed to lnp-run (non-dumpable) still shows its name.
        let name = Asker.executable(of: pid) ?? ProcFiles.commandName(of: pid).map { "named \($0)" } ?? "gone"
        Diagnostics.note("process \(pid) (\(TerminalText.shown(name))): \(what)")
    }

    /// Starts deciding the calls the listener's filter notifies.
    func supervise(_ listener: NotificationListener, features: KernelFeatures) {
        // Without it the program and lnp-run wake on different CPUs: 40–100 µs a call.
        if features.synchronousWakeUp { _ = listener.wakeSynchronously() }
        supervisor = CallSupervisor(listener: listener, policy: self, features: features)
    }

    /// The listener is ready: the next call, and its ask if the person must answer it.
    func supervisorEvents(_ events: Int16) {
        if events & Int16(POLLIN) != 0, case .asks(let held) = supervisor?.handleNext() { ask(about: held) }
        else if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { treeGone = true }
    }

    /// A held call's ask, as the kernel showed it, through the prompt like any other.
    private func ask(about held: CallSupervisor.HeldCall) {
        let pending = held.ask
        let ask = ReceivedAsk(
            holding: currentSettings.decision == .ask, onBehalfOf: nil, operation: pending.operation,
            transport: pending.transport, endpoint: pending.endpoint, via: nil, name: nil, usage: "")
        let scope = pending.endpoint.flatMap { $0.scopeID == 0 ? nil : VerdictText.interfaceName($0.scopeID) }
        handle(ask, by: Asker(pid: pending.pid), reason: VerdictText.reason(.local(pending.reason), scopeName: scope), from: .call(held))
    }

    /// Answers whoever waits; nil lets them go unanswered (the run ends): a connection is
    /// closed, a held call denied.
    func reply(_ waiter: Waiter, _ answer: Answer?) {
        switch waiter {
        case .connection(let client):
            if let answer { RunServer.reply(client, answer) } else { close(client) }
        case .call(let held):
            supervisor?.resume(held, with: answer ?? AskingState.denied(.unanswered))
        }
    }
}
