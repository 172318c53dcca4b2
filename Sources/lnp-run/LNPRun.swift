import ArgumentParser
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
            The exit status is PROGRAM's: 127 if it is not found, 126 if it cannot be executed, \
            125 for an error of lnp-run's own.
            """)

    enum Policy: String, EnumerableFlag {
        case allow, deny

        static func help(for value: Policy) -> ArgumentHelp? {
            switch value {
            case .allow: return "Allow local-network operations (and record them)."
            case .deny: return "Deny local-network operations: they fail at once and send nothing."
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

    @Option(help: ArgumentHelp("Append a JSON line per local-network operation to FILE.", valueName: "FILE"))
    var audit: String?

    @Option(help: ArgumentHelp(
        "Attribute every socket to the app (the default) or to the user, as a browser would.", valueName: "WHO"))
    var attribution: AttributionOption = .app

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
        guard let policy else {
            throw Failure("choose --allow or --deny (a program's own remembered decision is not supported yet)")
        }
        var errno = LaunchSettings.defaultErrno
        if let errnoName {
            guard let value = ErrnoName.value(of: errnoName) else {
                throw Failure("unknown errno '\(errnoName)'; give a name such as EPERM, ECONNREFUSED, ETIMEDOUT, or a number")
            }
            errno = value
        }

        let program: String
        switch ProgramLocator.locate(name) {
        case .success(let path): program = path
        case .failure(.notFound(let what)): throw Failure("\(what): command not found", status: ExitStatus.notFound)
        case .failure(.notExecutable(let what)): throw Failure("\(what): not an executable file", status: ExitStatus.notExecutable)
        }
        guard let preload = PreloadLocator.locate() else {
            throw Failure("cannot find \(PreloadLocator.fileName) beside lnp-run or in ../lib/lnp/")
        }
        // The loader splits LD_PRELOAD at spaces and colons, with no way to escape them: such
        // a path would leave the program silently unobserved.
        if preload.contains(" ") || preload.contains(":") {
            throw Failure("\(preload) cannot be preloaded: LD_PRELOAD cannot carry a path with a space or a colon; "
                + "install lnp elsewhere (scripts/install PREFIX)")
        }
        let auditPath = try audit.map { path throws(Failure) in try AuditFile.prepare(path) }

        let observability = Observability.examine(program, preload: try? ELFFile.read(path: preload))
        if !observability.isObservable {
            Diagnostics.warning("cannot observe \(program): \(observability.summary); running it unobserved")
        }

        let settings = LaunchSettings(
            preload: preload, program: program, decision: policy == .allow ? "allow" : "deny", errno: errno,
            attribution: attribution.rawValue, auditPath: auditPath)
        let environment = settings.environment(from: ProcessEnvironment.current())
        let failure = Exec.replaceProcess(path: program, arguments: arguments, environment: environment)
        throw Failure("cannot execute \(program): \(ErrnoName.description(of: failure))",
                      status: failure == ENOENT ? ExitStatus.notFound : ExitStatus.notExecutable)
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

    /// One write, so the line stays whole next to the program's own output.
    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }
}
