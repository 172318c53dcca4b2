import CGNUExtensions
import LNPCoreHost
import LNPStore
import LNPSupervisor
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's work once its options are read: the program looked up and decided, started
/// under the preload and the supervisor, its tree answered until the last process has gone.
extension RunOptions {
    /// `programWords`: `command` as it was given, byte for byte.
    func launch(programWords: GivenWords) throws(Failure) {
        // Before lnp-run opens anything: which descriptors a service manager passed.
        let handOff = ServiceHandOff.atStart()
        // A standard stream lnp-run was started without (a service manager's, `<&- >&-`) is
        // held by /dev/null, close-on-exec: else the first descriptors lnp-run opens (the
        // signalfd, the audit) take its number, and the keeper, which puts /dev/null on the
        // standard streams once the program's status is sent, replaced them there (the records
        // of what the program left running were lost, and the keeper spun). The program
        // starts without the stream, as lnp-run was started.
        for stream: Int32 in 0...2 where fcntl(stream, F_GETFD) < 0 && errno == EBADF {
            _ = open("/dev/null", O_RDWR | O_CLOEXEC)  // (the lowest free number: `stream`)
        }
        // First, before any thread exists: a signal is then
        // blocked in every thread and reaches the signalfd, and none can end lnp-run early.
        guard let signals = SignalIntake.start() else { throw Failure("cannot take in signals: \(ErrnoName.description(of: Glibc.errno))") }
        // (The hand reader gives PROGRAM, or `--` and PROGRAM: lnp-run-arguments has answered
        // a help request or an unknown option where ArgumentParser captured one.)
        var arguments = command
        var words = programWords.bytes
        if arguments.first == "--" {
            arguments.removeFirst()
            words.removeFirst()
        }
        guard let name = arguments.first else { throw Failure("no PROGRAM to run; usage: lnp-run [options] -- PROGRAM [ARGS...]") }
        // The program is named by its path as text (the store, the records, the lookup): a path
        // that is not UTF-8 would name another file.
        guard words.count == arguments.count, GivenWords.isUTF8(words[0]) else {
            throw Failure("\(GivenWords.shown(words.first ?? [])): a program whose path is not UTF-8 cannot be run under "
                + "lnp-run; give it a UTF-8 name (a symbolic link will do)")
        }
        guard promptTimeout > 0 && promptTimeout <= 86_400 else {
            throw Failure("--prompt-timeout takes 1 to 86400 seconds, not \(promptTimeout)")
        }
        if strict && preloadOnly { throw Failure("--strict and --preload-only cannot be given together: --strict needs the supervisor") }
        var errno = LaunchSettings.defaultErrno
        if let errnoName {
            guard let value = ErrnoName.value(of: errnoName) else {
                throw Failure("unknown errno '\(errnoName)'; give a name such as EPERM, ECONNREFUSED, ETIMEDOUT, or a number")
            }
            errno = value
        }

        var bonjour = BonjourDeclaration.undeclared
        if let bonjourServices {
            bonjour = try BonjourDeclaration.parse(bonjourServices, from: "--bonjour-services")
        } else if let declared = ProgramLocator.environmentValue("LNP_BONJOUR_SERVICES") {
            bonjour = try BonjourDeclaration.parse(declared, from: "LNP_BONJOUR_SERVICES")
        }

        let program: String
        switch ProgramLocator.locate(name) {
        case .success(let path): program = path
        case .failure(let failure):
            let problem = ProgramPathProblem(failure)
            throw Failure(problem.message, status: problem.status)
        }
        // So is a script given to an interpreter (`python3 tool.py`): its path as text, with
        // U+FFFD for bytes that are not UTF-8, would name another file, whose decision and name
        // the run would take, or none, and then the interpreter's.
        if let script = ProgramIdentity.scriptWord(executable: program, arguments: Array(arguments.dropFirst())),
           script.contains("\u{FFFD}"),
           let word = words.dropFirst().first(where: { !GivenWords.isUTF8($0) && String(decoding: $0, as: UTF8.self).contains(script) }) {
            throw Failure("\(GivenWords.shown(word)): a script whose path is not UTF-8 cannot be run under lnp-run; "
                + "give it a UTF-8 name (a symbolic link will do)")
        }
        // From here on, the keeper (RunKeeper): the process the shell waits for only waits.
        try RunKeeper.split(signals: signals, handOff: handOff) { statusChannel throws(Failure) in
            try keep(program: program, arguments: arguments, words: GivenWords(words), errno: errno, bonjour: bonjour,
                     signals: signals, handOff: handOff, statusChannel: statusChannel)
        }
    }

    /// The keeper's part of the launch, on a thread of its own (RunKeeper.split).
    /// `arguments` as text, for the program's identity; `words`, the same as given, to run it with.
    private func keep(program: String, arguments: [String], words: GivenWords, errno: Int32, bonjour: BonjourDeclaration,
                      signals: SignalIntake, handOff: ServiceHandOff, statusChannel: StatusChannel) throws(Failure) -> Never {
        // Without --allow or --deny, the store is read on a thread of its own while the rest of
        // the start goes on (SQLite's open and query were a third of the keeper's work before
        // the program starts).
        let storePath = DecisionStore.defaultPath()
        let lookedUp = ProgramIdentity.path(executable: program, arguments: Array(arguments.dropFirst()))
        var found: Lookup? = nil
        let lookup = policy == nil ? BackgroundWork { found = DecisionLookup.lookup(lookedUp, storePath: storePath) } : nil
        defer { lookup?.wait() }  // (an error ends the keeper: not while SQLite works)
        let identity = ProgramIdentity.of(executable: program, arguments: Array(arguments.dropFirst()))
        guard let preload = PreloadLocator.locate() else {
            throw Failure("cannot find \(PreloadLocator.fileName) \(PreloadLocator.places)")
        }
        // The loader splits LD_PRELOAD at spaces and colons, with no way to escape them: such
        // a path would leave the program silently unobserved.
        if preload.contains(" ") || preload.contains(":") {
            throw Failure("\(preload) cannot be preloaded: LD_PRELOAD cannot carry a path with a space or a colon; "
                + "install lnp elsewhere (scripts/install PREFIX)")
        }
        if auditAll && audit == nil { throw Failure("--audit-all needs --audit FILE (or --audit syslog)") }
        // Before the program runs, so that a mistake is reported rather than lost afterwards.
        let destination = try audit.map { path throws(Failure) in try AuditDestination.open(path) }
        let server = try RunServer.start()

        let features = try Supervision.features(asKernel: ProgramLocator.environmentValue("LNP_SUPERVISOR_AS_KERNEL")).get()
        var supervision = Supervision(preloadOnly ? .off : strict ? .strict : .withGadget, features: features)
        let observability = Observability.examine(program, preload: try? ELFFile.read(path: preload))
        SupervisedProgram.warnings(observability, program: program, supervision: supervision).forEach(Diagnostics.warning)

        let enclosing = try EnclosingRun.find(hint: ProgramLocator.environmentValue("LNP_RUN"))
        lookup?.wait()
        // (A script removed or made in the meantime changes which file is the program: then
        // it is looked up again, here.)
        if identity.path != lookedUp { found = nil }
        let launch = found.map { LaunchDecision.make(for: identity, found: $0, denyWhileAsking: denyWhileAsking) }
            ?? LaunchDecision.make(for: identity, option: policy.map { $0 == .allow }, storePath: storePath,
                                   denyWhileAsking: denyWhileAsking)
        launch.warnings.forEach(Diagnostics.warning)

        let ownRecords: RecordScope = audit == nil && !summary ? .none : auditAll ? .all : .local
        var settings = LaunchSettings(
            preload: preload, program: identity.path, decision: launch.policy, errno: errno,
            attribution: attribution.rawValue, records: ownRecords, basis: launch.basis, bonjour: bonjour)
        var asksUp = false
        if let enclosing {
            let narrowed = enclosing.narrow(&settings)
            asksUp = narrowed.asksUp
            narrowed.note.map(Diagnostics.warning)
            // The enclosing run's audit must see this tree's operations too.
            if enclosing.records.rawValue > settings.records.rawValue { settings.records = enclosing.records }
        }
        let records = RunRecords(
            destination: destination, scope: ownRecords, summarising: summary,
            upstream: enclosing.flatMap { $0.records == .none ? nil : $0.pid }, enclosing: enclosing?.pid)
        var asking: RunLoop.Asking? = nil
        if launch.asks {
            asking = RunLoop.Asking(
                program: identity.path,
                usage: usageDescription ?? ProgramLocator.environmentValue("LNP_USAGE_DESCRIPTION") ?? "",
                timeoutSeconds: promptTimeout,
                remember: { allow in LaunchDecision.remember(allow, for: identity) })
        }

        _ = lnp_become_subreaper()
        // A keeper with a filter holds its listener and decides for the tree, as the program's
        // user. Where that user may take another of its processes' descriptors or trace it (no
        // Yama, or ptrace_scope 0), the program could take the listener (pidfd_getfd) and let
        // its own calls through, or rewrite the keeper's memory: not dumpable, the keeper is
        // closed to it. (After the registration with an enclosing run, which reads this
        // process's executable; the program is dumpable again once it is executed.)
        _ = lnp_set_dumpable(supervision.filter == nil ? 1 : 0)
        Spawn.keepDescriptorForThePreload()
        let environment = settings.environment(from: ProcessEnvironment.current(), runPID: getpid())
        let handedOn = handOff.programEnvironment(environment)
        // With the page's address, if the run has one.
        func programEnvironment(_ supervision: Supervision) -> [[UInt8]] {
            handedOn.environment + supervision.environment.map { Array($0.utf8) }
        }
        // A run that may ask gives the program a terminal of its own (TerminalRelay).
        let relay = asking != nil ? TerminalRelay.start() : nil
        var hooks = strict ? Self.socketHooks(administersTheSystem: !supervision.noNewPrivs, nested: enclosing != nil) : nil
        var started = Spawn.start(path: program, arguments: words, environment: programEnvironment(supervision),
                                  ownPIDEntries: handedOn.ownPIDEntries, signals: signals, relay: relay,
                                  supervision: supervision, cgroup: hooks)
        var belowEnclosingFilter = false
        if case .failure(let refused) = started, refused.isFilter {
            // Below another supervisor (EBUSY): a nested lnp-run, whose calls the outer one
            // decides and whose page the preload keeps using; or no seccomp at all.
            let nested = refused.errno == EBUSY && enclosing != nil
            belowEnclosingFilter = nested
            if !nested { Diagnostics.warning(SupervisedProgram.refusedFilter(refused.errno)) }
            let inherited = nested ? Supervision.inheritedGadget(ProgramLocator.environmentValue("LNP_GADGET")) : nil
            if strict && inherited != nil { Diagnostics.warning(SupervisedProgram.strictBelowGadget) }
            supervision = supervision.withoutFilter(inheritedGadget: inherited)
            // No listener of its own; the enclosing run's supervisor must read this keeper's
            // calls (its records and asks passed up), which it cannot in a process not dumpable.
            _ = lnp_set_dumpable(1)
            // No supervisor of its own: its hooks would refuse the calls another one makes.
            hooks?.remove()
            hooks = nil
            started = Spawn.start(path: program, arguments: words, environment: programEnvironment(supervision),
                                  ownPIDEntries: handedOn.ownPIDEntries, signals: signals, relay: relay, supervision: supervision)
        }
        let child: pid_t
        switch started {
        case .success(let spawned): child = spawned.pid
        case .failure(let spawnFailure):
            let failure = spawnFailure.errno
            hooks?.remove()
            relay?.finish()
            server.stop()
            throw Failure("cannot execute \(program): \(ErrnoName.description(of: failure))",
                          status: failure == ENOENT ? ExitStatus.notFound : ExitStatus.notExecutable)
        }
        records.madeBySupervisor = supervision.filter != nil ? .all
            : belowEnclosingFilter ? (enclosing?.records == .all ? .all : .local) : .none
        // (Said once the filter is in: where seccomp is refused too, that is what matters.)
        if supervision.filter != nil, let refused = Supervision.descriptorTakingRefused() {
            Diagnostics.warning(SupervisedProgram.descriptorsRefused(refused.call, refused.errno))
        }
        // The program has the sockets a service manager passed, and its standard input and
        // output: the keeper holds no copy (its notes go to the standard error).
        handOff.closePassedDescriptors()
        ProgramStreams.letGo([0, 1])
        Spawn.raiseDescriptorLimit()
        // "Last used" is written beside the run: another writer may hold the store for
        // seconds, and the program's asks are served from the run loop below.
        let marking = launch.needsMarkingUsed ? BackgroundWork { LaunchDecision.markUsed(identity) } : nil
        let loop = RunLoop(
            child: child, signals: signals, server: server, tree: ProcessTree(), records: records, settings: settings,
            asking: asking, upstream: asksUp ? enclosing?.pid : nil, enclosing: enclosing?.pid, relay: relay)
        if case .success(let spawned) = started, let listener = spawned.listener {
            loop.supervise(NotificationListener(fd: listener), features: supervision.features)
        }
        let status = loop.run()
        records.flush()
        RunReport(records: records, program: program, observability: observability, summary: summary).lines.forEach(Diagnostics.summary)
        statusChannel.send(status)
        // The shell has the program's status; what the program left running stays supervised.
        loop.serveRemainingTree()
        hooks?.remove()
        records.finish()
        server.stop()
        marking?.wait()
        Glibc.exit(0)
    }

    /// Under --strict, the kernel's socket hooks on the program's cgroup, which close the race
    /// the supervisor cannot: only with the privilege to attach them (the README names the
    /// race that remains without).
    private static func socketHooks(administersTheSystem: Bool, nested: Bool) -> SocketHookCgroup? {
        guard administersTheSystem else { return nil }
        switch SocketHookCgroup.create() {
        case .success(let cgroup): return cgroup
        case .failure where nested: return nil  // (the enclosing run's, if it has any, are in force)
        case .failure(let why):
            Diagnostics.warning("--strict: no socket hooks (\(why.message)): a program can still race the supervisor's look at "
                + "a Unix socket's call (see the README)")
            return nil
        }
    }
}
