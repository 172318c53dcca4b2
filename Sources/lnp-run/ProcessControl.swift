import CGNUExtensions
import LNPSupervisorSys
import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// The signals lnp-run takes in through a signalfd: SIGCHLD, and those it passes on to the
/// program. Job-control stops (SIGTSTP, SIGTTIN, SIGTTOU) are left alone: they stop lnp-run
/// with the rest of the job, as a shell expects.
struct SignalIntake {
    /// Every asynchronous signal whose default would end lnp-run (and orphan the program),
    /// and the notifications a program may expect (SIGWINCH, SIGCONT). Real-time signals
    /// are not among them.
    static let forwarded: [Int32] = [
        SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT, SIGPWR, SIGXCPU, SIGXFSZ,
        SIGVTALRM, SIGPROF, SIGIO,
    ]

    /// Signals a process may send lnp-run to end it with its terminal left raw, or with a
    /// crash report: taken in and dropped. (A real fault of lnp-run's own still ends it:
    /// the kernel delivers those whatever the mask.)
    static let absorbed: [Int32] = [SIGSYS, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSTKFLT]

    let fd: Int32
    /// The mask lnp-run started with, for the program.
    let originalMask: sigset_t
    /// Whether SIGPIPE was ignored when lnp-run started (the program inherits that, not
    /// lnp-run's own choice to ignore it).
    let pipeWasIgnored: Bool

    static func start() -> SignalIntake? {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGCHLD)
        for signal in forwarded + absorbed { sigaddset(&set, signal) }
        var original = sigset_t()
        guard sigprocmask(SIG_BLOCK, &set, &original) == 0 else { return nil }
        let fd = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else { return nil }
        // Replies to an asker that has gone must not kill lnp-run.
        return SignalIntake(fd: fd, originalMask: original, pipeWasIgnored: lnp_ignore_sigpipe() != 0)
    }

    /// The signals that arrived.
    func drain() -> [signalfd_siginfo] {
        var received: [signalfd_siginfo] = []
        var info = signalfd_siginfo()
        while read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            received.append(info)
        }
        return received
    }
}

enum SignalOrigin {
    /// Whether a signal is lnp-run's to pass on: sent by a process (not the terminal, which
    /// signals the program's whole process group itself), and not by the program or one of
    /// its descendants (a `kill(0, …)` reaches the program already), nor caused by lnp-run
    /// itself (SIGXFSZ when its own write of the audit meets the file size limit).
    static func shouldForward(_ info: signalfd_siginfo) -> Bool {
        if Int32(info.ssi_signo) == SIGCHLD || SignalIntake.absorbed.contains(Int32(info.ssi_signo)) { return false }
        let code = info.ssi_code
        guard code == SI_USER || code == SI_QUEUE || code == SI_TKILL else { return false }
        let sender = pid_t(info.ssi_pid)
        return sender != getpid() && !ProcessTree.isDescendant(sender)
    }
}

/// A failed start: which step (`lnp_spawn_step`), with its errno.
struct SpawnFailure: Error {
    var step: Int32
    var errno: Int32

    /// The seccomp filter could not be installed (the program never ran).
    var isFilter: Bool { step == Int32(LNP_SPAWN_FILTER.rawValue) || step == Int32(LNP_SPAWN_NO_NEW_PRIVS.rawValue) }
}

/// The program as started: its pid, and the filter's listener if it runs under one.
struct Spawned {
    var pid: pid_t
    var listener: Int32?
}

enum Spawn {
    /// Starts the program as lnp-run's child, with the signal mask and dispositions lnp-run
    /// itself was started with — on `relay`'s terminal, if given: in a session of its own
    /// whose controlling terminal it is, in place of the standard streams that were the
    /// person's terminal; in `cgroup`, if given. The entries of `environment` at `ownPIDEntries`
    /// (`ServiceHandOff`) get the program's pid as their value. Returns the child, or the errno
    /// of a failed exec.
    static func start(path: String, arguments: GivenWords, environment: [[UInt8]], ownPIDEntries: [Int] = [],
                      signals: SignalIntake, relay: TerminalRelay?, supervision: Supervision,
                      cgroup: SocketHookCgroup? = nil) -> Result<Spawned, SpawnFailure> {
        var request = lnp_spawn_request()
        request.no_new_privs = supervision.noNewPrivs ? 1 : 0
        request.cgroup_procs = cgroup?.procs ?? -1
        request.killable_wait = supervision.features.killableWait ? 1 : 0
        request.mask = signals.originalMask
        sigemptyset(&request.defaults)
        if !signals.pipeWasIgnored { sigaddset(&request.defaults, SIGPIPE) }
        if let relay {
            request.terminal_streams = Int32((0...2).filter { relay.isTerminal(Int32($0)) }.reduce(0) { $0 | 1 << $1 })
        }
        let argv = arguments.cStrings()
        let envp = CStringCopies.of(environment)
        for (slot, entry) in ownPIDEntries.prefix(2).enumerated() {
            let value = envp[entry].flatMap { strchr($0, Int32(UInt8(ascii: "="))) }.map { $0 + 1 }
            if slot == 0 { request.own_pid.0 = value } else { request.own_pid.1 = value }
        }
        defer {
            CStringCopies.release(argv)
            CStringCopies.release(envp)
        }
        var spawned = lnp_spawned()
        let started = path.withCString { path in
            (relay?.slavePath ?? "").withCString { terminal in
                request.path = path
                request.terminal = relay == nil ? nil : terminal
                return argv.withUnsafeBufferPointer { argv in
                    envp.withUnsafeBufferPointer { envp in
                        request.argv = argv.baseAddress
                        request.envp = envp.baseAddress
                        return (supervision.filter ?? []).withUnsafeBufferPointer { filter in
                            request.filter = supervision.filter == nil ? nil : filter.baseAddress
                            request.filter_length = UInt16(filter.count)
                            return lnp_spawn(&request, &spawned)
                        }
                    }
                }
            }
        }
        guard started == 0 else { return .failure(SpawnFailure(step: spawned.failed_step, errno: spawned.error)) }
        return .success(Spawned(pid: spawned.pid, listener: spawned.listener >= 0 ? spawned.listener : nil))
    }

    /// Lowers lnp-run's soft descriptor limit, which the program inherits, one below the hard
    /// one, if it is at it: the preload keeps that descriptor (`DescriptorReserve`).
    static func keepDescriptorForThePreload() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let soft = DescriptorReserve.softLimit(UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
        guard soft != UInt64(limit.rlim_cur) else { return }
        limit.rlim_cur = rlim_t(soft)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Raises lnp-run's own soft descriptor limit to its hard one (after the program has
    /// started with the limit it was given): each holding asker takes a descriptor.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Ends lnp-run as the program ended: with its exit status, or by its signal (so a
    /// shell sees the same death), without a core dump of lnp-run's own.
    static func exit(mirroring status: Int32) -> Never {
        if status & 0x7f == 0 { Glibc.exit((status >> 8) & 0xff) }
        let signalNumber = status & 0x7f
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
        signal(signalNumber, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        raise(signalNumber)
        Glibc.exit(128 + signalNumber)
    }
}
