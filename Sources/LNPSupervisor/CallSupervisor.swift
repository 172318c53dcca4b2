import LNPCoreHost
import LNPSupervisorSys
import LNPSys

#if canImport(Glibc)
import Glibc
#endif

/// The supervisor: each notified call read, decided by the same core as the preload's
/// (`Decisions`, through `SupervisorGate`), and made by lnp-run on its own copies — or failed
/// with the errno, or, where no decision depends on what the kernel reads again, continued.
/// One-way: notification → process → call read → decision → made, answered.
public final class CallSupervisor {
    /// A call held while the person is asked; `resume` it with the answer.
    public struct HeldCall: Sendable {
        public let notification: Notification
        public let ask: PendingAsk
    }

    public enum Outcome {
        case answered
        case asks(HeldCall)
    }

    public let listener: NotificationListener
    let policy: SupervisorPolicy
    let features: KernelFeatures
    let performer: CallPerformer
    /// lnp-run's own capabilities, when it is privileged: a caller whose differ has its
    /// calls made with its own credentials (`CallerCredentials`).
    let privileged: CapabilitySets?
    let namespaces: SocketNamespace
    /// Processes already named on stderr.
    private var named = NamedProcesses()

    public init(listener: NotificationListener, policy: SupervisorPolicy, features: KernelFeatures) {
        self.listener = listener
        self.policy = policy
        self.features = features
        performer = CallPerformer(listener: listener)
        privileged = CallerCredentials.lnpRunPrivileges()
        namespaces = SocketNamespace(privileged: privileged?.administersTheSystem ?? false)
    }

    /// Takes the next notification (poll the listener first); nil if there was none.
    public func handleNext() -> Outcome? {
        guard let notification = listener.receive() else { return nil }
        return handle(notification, given: nil)
    }

    /// Whether calls made on workers wait (their threads' signals are looked at meanwhile).
    public var hasCallsInFlight: Bool { !InterruptedCalls.shared.isEmpty }

    /// Interrupts the calls in flight whose waiting thread has a signal to take.
    public func interruptSignalledCalls() {
        let listener = self.listener
        InterruptedCalls.shared.interruptSignalled { listener.isValid($0) }
    }

    /// Decides a held call again, now with the person's answer.
    public func resume(_ held: HeldCall, with answer: Answer) {
        _ = handle(held.notification, given: answer)
    }

    func handle(_ notification: Notification, given: Answer?) -> Outcome {
        let id = notification.id
        guard let (call, isNative) = GatedCalls.call(arch: notification.arch, number: notification.number) else {
            listener.fail(id, errno: ENOSYS)
            return .answered
        }
        guard let process = NotifiedProcess.open(thread: notification.thread, features: features) else {
            listener.fail(id, errno: ESRCH)
            return .answered
        }
        // The pidfd names the thread that waits, not one that reused its number.
        guard listener.isValid(id) else { return .answered }
        guard isNative else {
            refuseForeign(process)
            listener.fail(id, errno: EACCES)
            return .answered
        }
        let outcome = SupervisorGate.Outcome()
        let prepared: Prepared
        if call == .socket {
            prepared = packetSocket(process, given: given, outcome: outcome)
        } else {
            prepared = socketCall(call, notification, process, given: given, outcome: outcome)
        }
        switch prepared {
        case .proceed: listener.proceed(id)
        case .fail(let error): listener.fail(id, errno: error)
        case .perform(var work, let socket):
            if let privileged, CapabilitySets.of(thread: notification.thread) != privileged {
                // Read while the thread waits in the call: it cannot change them meanwhile.
                guard let caller = CallerCredentials.of(thread: notification.thread) else {
                    close(socket)
                    listener.fail(id, errno: EPERM)
                    return .answered
                }
                work.credentials = caller
            }
            // What was read was read from the thread that still waits.
            guard listener.isValid(id) else {
                close(socket)
                return .answered
            }
            performer.perform(work, id: id, socket: socket, caller: process)
        case .ask(let socket):
            if let socket { close(socket) }
            return .asks(HeldCall(notification: notification, ask: outcome.ask!))
        }
        return .answered
    }

    enum Prepared {
        /// The kernel makes the call as asked: nothing in it is decided on memory it reads again.
        case proceed
        case fail(Int32)
        case perform(PreparedCall, socket: Int32)
        /// Wait for the person's answer (the taken socket, if any, to be closed).
        case ask(socket: Int32?)
    }

    /// socket(AF_PACKET, …): its arguments are registers, which the kernel does not read again.
    private func packetSocket(_ process: NotifiedProcess, given: Answer?, outcome: SupervisorGate.Outcome) -> Prepared {
        let gate = SupervisorGate(process: process, programFD: -1, policy: policy, given: given, outcome: outcome)
        let denial = gate.decide(.socket, fd: nil, transport: .packet, endpoint: nil, name: UnsafeBufferPointer(start: nil, count: 0), reason: .packetSocket)
        if denial == SupervisorGate.waitsForAnswer { return .ask(socket: nil) }
        return denial == 0 ? .proceed : .fail(denial)
    }

    /// A call on a descriptor: an IP socket's is decided and made by lnp-run; on anything
    /// else (a Unix socket, a bad descriptor) the kernel answers — lnp decides nothing there.
    private func socketCall(
        _ call: SupervisedCall, _ notification: Notification, _ process: NotifiedProcess, given: Answer?,
        outcome: SupervisorGate.Outcome
    ) -> Prepared {
        let programFD = notification.int32(0)
        guard process.reachesDescriptors else {
            cannotRead(process, "it has a descriptor table of its own, which this kernel gives lnp-run no way to reach")
            return .fail(policy.deniedErrno)
        }
        let socket: Int32
        switch process.take(programFD) {
        case .success(let taken): socket = taken
        // No such descriptor: the kernel's own EBADF, whatever it would read.
        case .failure(let failure) where failure.errno == EBADF: return .proceed
        case .failure(let failure):
            // A process closed to lnp-run (non-dumpable, to an unprivileged supervisor): its
            // calls cannot be decided, so they are denied — never let through unread.
            cannotRead(process, "\(String(cString: strerror(failure.errno))): a non-dumpable process is closed to an unprivileged supervisor")
            return .fail(policy.deniedErrno)
        }
        guard let kind = SocketKind.of(socket), kind.domain == AF_INET || kind.domain == AF_INET6 else {
            close(socket)
            return .proceed
        }
        // Without the killable wait, a stream send may be taken from lnp-run halfway and made again.
        let resumable = !features.killableWait && (call == .sendto || call == .sendmsg) && kind.transport.isStream
            ? ResumedSends.Call(pid: process.pid, thread: notification.thread, number: notification.number, arguments: notification.arguments)
            : nil
        let decided = namespaces.deciding(on: socket) { inOtherNamespace -> Result<PreparedCall, CallFailure> in
            var gate = SupervisorGate(process: process, programFD: programFD, policy: policy, given: given, outcome: outcome)
            gate.inOtherNamespace = inOtherNamespace
            gate.socketDomain = kind.domain
            var reader = CallReader(process: process, socket: socket, kind: kind, decisions: Decisions(gate: gate))
            if let resumable {
                InterruptedCalls.shared.settle(thread: resumable.thread)
                reader.resumingAfter = ResumedSends.shared.isEmpty ? 0 : ResumedSends.shared.take(resumable)
            }
            switch call {
            case .connect: return reader.connect(notification)
            case .sendto: return reader.sendto(notification)
            case .sendmsg: return reader.sendmsg(notification)
            case .sendmmsg: return reader.sendmmsg(notification)
            case .bind: return reader.bind(notification)
            case .setsockopt: return reader.setsockopt(notification)
            case .socket, .socketcall, .ioctl, .ioUringSetup: return .failure(CallFailure(errno: ENOSYS))
            }
        }
        guard let result = decided else {
            close(socket)
            cannotRead(process, "its socket is in a network namespace lnp-run cannot enter")
            return .fail(policy.deniedErrno)
        }
        switch result {
        case .success(var prepared):
            prepared.resumable = resumable
            return .perform(prepared, socket: socket)
        case .failure(let failure) where failure.errno == SupervisorGate.waitsForAnswer: return .ask(socket: socket)
        case .failure(let failure):
            close(socket)
            return .fail(failure.errno)
        }
    }

    /// A process of another architecture (32-bit x86, x32): lnp cannot decide its socket
    /// calls, so they are refused — said once per process.
    private func refuseForeign(_ process: NotifiedProcess) {
        guard named.first(process.pid) else { return }
        policy.note(process: process.pid, "its socket calls are refused: lnp decides only \(GatedCalls.nativeName) "
            + "programs' calls, and this one is a 32-bit or x32 program")
    }

    private func cannotRead(_ process: NotifiedProcess, _ why: String) {
        guard named.first(process.pid) else { return }
        policy.note(process: process.pid, "cannot read it (\(why)); its socket calls are denied")
    }
}

/// Processes named once on stderr; a bounded set (pids are reused, and a tree can be large).
struct NamedProcesses {
    private var pids: Set<Int32> = []

    mutating func first(_ pid: Int32) -> Bool {
        if pids.count >= 4096 { pids.removeAll() }
        return pids.insert(pid).inserted
    }
}
