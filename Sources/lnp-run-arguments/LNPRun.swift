import ArgumentParser
import LNPVersion
import lnp_run
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// `lnp-run [options] -- PROGRAM [ARGS…]`: runs PROGRAM with liblnp.so preloaded, so that
/// every local-network operation of it and its children is decided and recorded. lnp-run-arguments
/// reads with it the command lines lnp-run does not read by hand (Sources/lnp-run/ArgumentReader.swift).
public struct LNPRun: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "lnp-run",
        abstract: "Run a program under local network privacy.",
        // (as the README writes it: `--` before PROGRAM keeps its options its own)
        usage: "lnp-run [<options>] -- <PROGRAM> [<ARGS> ...]",
        discussion: """
            Every operation of PROGRAM, and of every child it starts, that would reach the local \
            network (an on-link host, a link-local, multicast or broadcast address, a .local name) \
            is allowed or denied, and recorded with --audit. Everything else passes untouched.
            Without --allow or --deny, the program's remembered decision applies (see 'lnp list'); \
            a program nobody has decided asks on the terminal at its first local-network operation, \
            and the answer is remembered. With no terminal, it is denied and not remembered.
            The exit status is PROGRAM's: 127 if it is not found, 126 if it cannot be executed, \
            125 for an error of lnp-run's own.
            """,
        version: ProjectVersion.line(for: "lnp-run"))

    @Flag(exclusivity: .exclusive)
    var policy: RunOptions.Policy?

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
    var attribution: RunOptions.Attribution = RunOptions.defaultAttribution

    @Flag(help: ArgumentHelp(
        "While asking, fail operations at once with the errno (as Apple does) instead of holding them until the answer."))
    var denyWhileAsking = false

    // (unconditional: `--prompt-timeout -1` is a value out of range, which lnp-run names, not a
    // missing value)
    @Option(parsing: .unconditional,
            help: ArgumentHelp("How long the prompt waits for an answer before denying.", valueName: "SECONDS"))
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
    public static func parsedByArgumentParser(_ arguments: [String]) throws -> RunOptions {
        (try parseAsRoot(arguments) as! LNPRun).options
    }

    public init() {}

    /// lnp-run-arguments' entry point: argv[0] is the lnp-run to run again, the rest its
    /// arguments. Help, completions and mistakes are answered here, as ArgumentParser and
    /// lnp-run have always answered them; anything else runs lnp-run again, in this process,
    /// with the options as `PlainArguments.words(for:)` writes them.
    public static func readAndRunAgain() -> Never {
        var arguments = Array(CommandLine.arguments.dropFirst())
        // PROGRAM's arguments are the program's, whatever they look like.
        let start = PlainArguments.programStart(in: arguments)
        let dashesGiven = start < arguments.count && arguments[start] == "--"
        if start < arguments.count && !dashesGiven { arguments.insert("--", at: start) }
        // ... and go on as argv gave them, byte for byte (argv[0] is the lnp-run to run again).
        let program = GivenWords.fromArgv(1 + start + (dashesGiven ? 1 : 0))
        // lnp-run's own words are read as text here, and passed on so: bytes that are not
        // UTF-8 would reach lnp-run as U+FFFD (another audit file than the one named).
        if let word = GivenWords.fromArgv(1).optionWordNotUTF8(programCount: program.bytes.count + (dashesGiven ? 1 : 0)) {
            Diagnostics.error(GivenWords.optionNotUTF8(word))
            Glibc.exit(ExitStatus.ownError)
        }
        if let answer = answer(toOwnWords: arguments[..<start]) {
            print(answer, terminator: "")
            Glibc.exit(0)
        }
        // ArgumentParser's request for custom completions, which lnp-run's scripts never make
        // (it has none): ArgumentParser would call it an internal error.
        if arguments[..<start].contains("---completion") {
            Diagnostics.error("unknown option '---completion'; see 'lnp-run --help'")
            Glibc.exit(ExitStatus.ownError)
        }
        do {
            var options = try parsedByArgumentParser(arguments)
            // ArgumentParser captures from the first word it does not know, its own requests
            // among them, which the hand reader never gives lnp-run.
            if let first = options.command.first, let answer = answer(toRequest: first) {
                print(answer)
                Glibc.exit(0)
            }
            if let first = options.command.first, first != "--", first.hasPrefix("-") {
                Diagnostics.error("unknown option '\(first)'; see 'lnp-run --help'")
                Glibc.exit(ExitStatus.ownError)
            }
            if options.command.first != "--" { options.command.insert("--", at: 0) }
            let words = PlainArguments.words(for: options)
            // lnp-run would send a command line it cannot read back here: never run it again
            // with one it would read otherwise. The program's words end it (after the `--`).
            guard PlainArguments.parse(words) == options, options.command.count == program.bytes.count + 1 else {
                Diagnostics.error("cannot pass this command line on to lnp-run; see 'lnp-run --help'")
                Glibc.exit(ExitStatus.ownError)
            }
            runAgain(GivenWords(words.dropLast(program.bytes.count).map { Array($0.utf8) } + program.bytes))
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            Diagnostics.error(OneLine.of(message(for: error)) + "; see 'lnp-run --help'")
            Glibc.exit(ExitStatus.ownError)
        }
    }

    /// lnp-run's own completion script (CompletionScript), when its words ask for one by a
    /// shell's name; ArgumentParser answers the rest.
    static func answer(toOwnWords words: ArraySlice<String>) -> String? {
        for (index, word) in zip(words.indices, words) {
            let shell: String
            if word.hasPrefix("--generate-completion-script=") {
                shell = String(word.dropFirst("--generate-completion-script=".count))
            } else if word == "--generate-completion-script", index + 1 < words.endIndex {
                shell = words[index + 1]
            } else {
                continue
            }
            return CompletionShell(rawValue: shell).flatMap(CompletionScript.forLNPRun)
        }
        return nil
    }

    /// ArgumentParser's answer to a request of its own (help, the version, the description
    /// the manual is generated from), or nil for any other word.
    static func answer(toRequest word: String) -> String? {
        switch word {
        case "-h", "--help": return helpMessage()
        case "--version": return configuration.version
        case "--experimental-dump-help": return ToolDescription.withoutHelpSubcommand(_dumpHelp()) ?? _dumpHelp()
        default: return nil
        }
    }

    /// The lnp-run named by argv[0] with `words`; never this program itself (which would
    /// read the same words again, without end).
    private static func runAgain(_ words: GivenWords) -> Never {
        let launcher = CommandLine.arguments[0]
        var own = stat(), named = stat()
        guard launcher.hasPrefix("/"), stat(launcher, &named) == 0, stat("/proc/self/exe", &own) == 0,
              own.st_dev != named.st_dev || own.st_ino != named.st_ino else {
            Diagnostics.error("lnp-run-arguments is run by lnp-run: run lnp-run")
            Glibc.exit(ExitStatus.ownError)
        }
        let argv = GivenWords([Array(launcher.utf8)] + words.bytes).cStrings()
        execv(launcher, argv)
        Diagnostics.error("cannot run \(launcher): \(String(cString: strerror(errno)))")
        Glibc.exit(ExitStatus.ownError)
    }
}

extension RunOptions.Policy: EnumerableFlag {
    public static func help(for value: RunOptions.Policy) -> ArgumentHelp? {
        switch value {
        case .allow: return "Allow local-network operations for this run, whatever is remembered."
        case .deny: return "Deny local-network operations for this run: they fail at once and send nothing."
        }
    }
}

extension RunOptions.Attribution: ExpressibleByArgument {}
