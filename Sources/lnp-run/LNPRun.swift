import ArgumentParser
import CGNUExtensions
import LNPCoreHost
import LNPStore
import LNPSupervisor
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// `lnp-run [options] -- PROGRAM [ARGS…]`: runs PROGRAM with liblnp.so preloaded, so that
/// every local-network operation of it and its children is decided and recorded.
@main
struct LNPRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lnp-run",
        abstract: "Run a program under local network privacy.",
        discussion: """
            Every operation of PROGRAM, and of every child it starts, that would reach the local \
            network (an on-link host, a link-local, multicast or broadcast address, a .local name) \
            is allowed or denied, and recorded with --audit. Everything else passes untouched.
            Without --allow or --deny, the program's remembered decision applies (see 'lnp list'); \
            a program nobody has decided asks on the terminal at its first local-network operation, \
            and the answer is remembered. With no terminal, it is denied and not remembered.
            The exit status is PROGRAM's: 127 if it is not found, 126 if it cannot be executed, \
            125 for an error of lnp-run's own.
            """)

    enum Policy: String, EnumerableFlag {
        case allow, deny

        static func help(for value: Policy) -> ArgumentHelp? {
            switch value {
            case .allow: return "Allow local-network operations for this run, whatever is remembered."
            case .deny: return "Deny local-network operations for this run: they fail at once and send nothing."
            }
        }
    }

    enum AttributionOption: String, ExpressibleByArgument, CaseIterable {
        case app, user
    }

    @Flag(exclusivity: .exclusive)
    var policy: Policy?

    @Option(
        name: .customLong("errno"),
        help: ArgumentHelp("The errno a denied operation fails with (default: EHOSTUNREACH, as Apple's).", valueName: "NAME"))
    var errnoName: String?

    @Option(help: ArgumentHelp(
        "Append a JSON line per local-network operation to FILE; 'syslog' sends each to the system logger instead.",
        valueName: "FILE"))
    var audit: String?

    @Flag(help: ArgumentHelp(
        "Record all outgoing activity too: every connect, and the first datagram per socket and destination (needs --audit)."))
    var auditAll = false

    @Flag(help: ArgumentHelp(
        "When the program exits, say on stderr how many local-network operations were allowed and denied, and where to."))
    var summary = false

    @Option(help: ArgumentHelp(
        "Attribute every socket to the app (the default) or to the user, as a browser would.", valueName: "WHO"))
    var attribution: AttributionOption = .app

    @Flag(help: ArgumentHelp(
        "While asking, fail operations at once with the errno (as Apple does) instead of holding them until the answer."))
    var denyWhileAsking = false

    @Option(help: ArgumentHelp("How long the prompt waits for an answer before denying.", valueName: "SECONDS"))
    var promptTimeout: Int = 30

    @Flag(help: ArgumentHelp(
        "Leave system calls unsupervised: only the preload decides, and static programs, raw system calls and children without the preload go unseen."))
    var preloadOnly = false

    @Flag(help: ArgumentHelp(
        "Supervise every gated call of every process, the preload's too (no page whose calls pass): a program that knows lnp cannot slip past the supervisor through it. Unprivileged, one race remains: another thread may put an IP socket on a descriptor between the check of a Unix socket's call and the kernel's continuing it (see the README)."))
    var strict = false

    @Option(help: ArgumentHelp(
        "Why the program uses the local network, shown in the prompt (default: $LNP_USAGE_DESCRIPTION).", valueName: "TEXT"))
    var usageDescription: String?

    @Option(help: ArgumentHelp(
        "The Bonjour service types the program browses for and advertises, as Apple's NSBonjourServices (default: $LNP_BONJOUR_SERVICES): others fail as undeclared (NoAuth), even when allowed.",
        valueName: "TYPES"))
    var bonjourServices: String?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The program to run, and its arguments.", valueName: "PROGRAM"))
    var command: [String] = []

    static func main() {
        do {
            var runner = try parseAsRoot() as! LNPRun
            try runner.launch()
        } catch let failure as Failure {
            Diagnostics.error(failure.message)
            Glibc.exit(failure.status)
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            Diagnostics.error(message(for: error))
            Diagnostics.note("see 'lnp-run --help'")
            Glibc.exit(ExitStatus.ownError)
        }
    }

    mutating func launch() throws(Failure) {
        // First, before any thread exists (the store's library starts some): a signal is then
        // blocked in every thread and reaches the signalfd, and none can end lnp-run early.
        guard let signals = SignalIntake.start() else { throw Failure("cannot take in signals: \(ErrnoName.description(of: Glibc.errno))") }
        var arguments = command
        if arguments.first == "--" {
            arguments.removeFirst()
        } else if let first = arguments.first, first == "-h" || first == "--help" {
            print(LNPRun.helpMessage())
            Glibc.exit(0)
        } else if let first = arguments.first, first.hasPrefix("-") {
            throw Failure("unknown option '\(first)'; see 'lnp-run --help'")
        }
        guard let name = arguments.first else { throw Failure("no PROGRAM to run; usage: lnp-run [options] -- PROGRAM [ARGS...]") }
        guard promptTimeout > 0 && promptTimeout <= 86_400 else { throw Failure("--prompt-timeout takes 1 to 86400 seconds") }
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
        case .failure(.notFound(let what)): throw Failure("\(what): command not found", status: ExitStatus.notFound)
        case .failure(.notExecutable(let what)): throw Failure("\(what): not an executable file", status: ExitStatus.notExecutable)
        }
        // From here on, the keeper (RunKeeper): the process the shell waits for only waits.
        let statusChannel = try RunKeeper.split(signals: signals)
        guard let preload = PreloadLocator.locate() else {
            throw Failure("cannot find \(PreloadLocator.fileName) beside lnp-run or in ../lib/lnp/")
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

        let identity = ProgramIdentity.of(executable: program, arguments: Array(arguments.dropFirst()))
        let launch = LaunchDecision.make(
            for: identity, option: policy.map { $0 == .allow }, storePath: DecisionStore.defaultPath(),
            denyWhileAsking: denyWhileAsking)
        launch.warnings.forEach(Diagnostics.warning)

        let ownRecords: RecordScope = audit == nil && !summary ? .none : auditAll ? .all : .local
        let enclosing = try EnclosingRun.find(hint: ProgramLocator.environmentValue("LNP_RUN"))
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
            upstream: enclosing.flatMap { $0.records == .none ? nil : $0.pid }, enclosing: enclosing?.pid,
            supervisorMakesEveryCall: supervision.isStrict)
        var asking: RunLoop.Asking? = nil
        if launch.asks {
            asking = RunLoop.Asking(
                program: identity.path,
                usage: usageDescription ?? ProgramLocator.environmentValue("LNP_USAGE_DESCRIPTION") ?? "",
                timeoutSeconds: promptTimeout,
                remember: { allow in LaunchDecision.remember(allow, for: identity) },
                noTerminalMessage: "denied local-network access: \(TerminalText.shown(identity.path)) is undetermined and "
                    + "there is no terminal to ask on; decide with 'lnp allow \(TerminalText.shown(identity.path))' (or 'lnp deny')")
        }

        _ = lnp_become_subreaper()
        Spawn.keepDescriptorForThePreload()
        let environment = settings.environment(from: ProcessEnvironment.current(), runPID: getpid())
        // A run that may ask gives the program a terminal of its own (TerminalRelay).
        let relay = asking != nil ? TerminalRelay.start() : nil
        var hooks = strict ? Self.socketHooks(administersTheSystem: !supervision.noNewPrivs, nested: enclosing != nil) : nil
        var started = Spawn.start(path: program, arguments: arguments, environment: environment + supervision.environment,
                                  signals: signals, relay: relay, supervision: supervision, cgroup: hooks)
        if case .failure(let refused) = started, refused.isFilter {
            // Below another supervisor (EBUSY): a nested lnp-run, whose calls the outer one
            // decides and whose page the preload keeps using; or no seccomp at all.
            let nested = refused.errno == EBUSY && enclosing != nil
            if !nested { Diagnostics.warning(SupervisedProgram.refusedFilter(refused.errno)) }
            let inherited = nested ? Supervision.inheritedGadget(ProgramLocator.environmentValue("LNP_GADGET")) : nil
            if strict && inherited != nil { Diagnostics.warning(SupervisedProgram.strictBelowGadget) }
            supervision = supervision.withoutFilter(inheritedGadget: inherited)
            // No supervisor of its own: its hooks would refuse the calls another one makes.
            hooks?.remove()
            hooks = nil
            started = Spawn.start(path: program, arguments: arguments, environment: environment + supervision.environment,
                                  signals: signals, relay: relay, supervision: supervision)
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
        Spawn.raiseDescriptorLimit()
        if launch.needsMarkingUsed { LaunchDecision.markUsed(identity) }
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

/// Exit statuses of lnp-run's own, as env(1) and the shells use them.
enum ExitStatus {
    static let ownError: Int32 = 125
    static let notExecutable: Int32 = 126
    static let notFound: Int32 = 127
}

struct Failure: Error {
    var message: String
    var status: Int32

    init(_ message: String, status: Int32 = ExitStatus.ownError) {
        self.message = message
        self.status = status
    }
}

enum Diagnostics {
    static func error(_ message: String) { write("lnp-run: \(message)\n") }
    static func warning(_ message: String) { write("lnp-run: warning: \(message)\n") }
    static func note(_ message: String) { write("lnp-run: \(message)\n") }
    /// A line of `--summary`, which names itself.
    static func summary(_ line: String) { write(line + "\n") }

    /// One write, so the line stays whole next to the program's own output.
    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }
}
