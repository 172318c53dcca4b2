import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// `lnp-run [options] -- PROGRAM [ARGS…]`: runs PROGRAM with liblnp.so preloaded, so that
/// every local-network operation of it and its children is decided and recorded.
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
    var attribution: AttributionOption = RunOptions.defaultAttribution

    @Flag(help: ArgumentHelp(
        "While asking, fail operations at once with the errno (as Apple does) instead of holding them until the answer."))
    var denyWhileAsking = false

    @Option(help: ArgumentHelp("How long the prompt waits for an answer before denying.", valueName: "SECONDS"))
    var promptTimeout: Int = RunOptions.defaultPromptTimeout

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

    /// The options as ArgumentParser read them.
    var options: RunOptions {
        RunOptions(
            policy: policy, errnoName: errnoName, audit: audit, auditAll: auditAll, summary: summary,
            attribution: attribution, denyWhileAsking: denyWhileAsking, promptTimeout: promptTimeout,
            preloadOnly: preloadOnly, strict: strict, usageDescription: usageDescription,
            bonjourServices: bonjourServices, command: command)
    }

    /// The options as ArgumentParser reads `arguments` (it throws for help, completions and
    /// mistakes, which `main` reports as ArgumentParser does).
    static func parsedByArgumentParser(_ arguments: [String]) throws -> RunOptions {
        (try parseAsRoot(arguments) as! LNPRun).options
    }

    static func main() {
        do {
            // The plain forms without ArgumentParser, whose first parse costs more than the
            // rest of the start; everything else with it.
            let arguments = Array(CommandLine.arguments.dropFirst())
            let options = try PlainArguments.parse(arguments) ?? parsedByArgumentParser(arguments)
            try options.launch()
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
}

/// lnp-run's entry point (Sources/LNPRunMain/main.swift).
public func launcherMain() {
    LNPRun.main()
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
