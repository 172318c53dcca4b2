/// lnp-run's command line read without ArgumentParser, when it is in a plain form: long
/// options, each at most once, spelled out (`--audit FILE` or `--audit=FILE`), then PROGRAM
/// (or `--` and PROGRAM) and its arguments. ArgumentParser's first parse costs more than the
/// rest of lnp-run's start (docs/benchmarks.md, "The launcher's start"), so it is not in
/// lnp-run: anything else — help, a mistake, completions, a separate value that starts with
/// `-` — is left to lnp-run-arguments, whose ArgumentParser reads it, so that its messages and
/// its meaning stay the only ones, and which runs lnp-run again with the options in the form
/// written by `words(for:)`.
public enum PlainArguments {
    /// The options, or nil when ArgumentParser must read the command line.
    public static func parse(_ arguments: [String]) -> RunOptions? {
        var options = RunOptions()
        // (An array: a Set of strings would cost the start a runtime conformance lookup.)
        var seen: [Substring] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            // PROGRAM, or the `--` before it: the rest is the program's, as ArgumentParser
            // captures it.
            if argument == "--" || !argument.hasPrefix("-") {
                // ArgumentParser reads a word of three dashes as a mistake even among
                // PROGRAM's arguments, unless `--` came first: it says so itself.
                if argument != "--" && arguments[index...].contains(where: { $0.hasPrefix("---") }) { return nil }
                options.command = Array(arguments[index...])
                return options
            }
            var name = Substring(argument)
            var attached: Substring? = nil
            if let equals = argument.firstIndex(of: "=") {
                name = argument[..<equals]
                attached = argument[argument.index(after: equals)...]
            }
            // Each option once; --allow and --deny are one choice.
            let key = name == "--deny" ? "--allow" : name
            guard !seen.contains(key) else { return nil }
            seen.append(key)
            if setFlag(name, in: &options) {
                guard attached == nil else { return nil }
                index += 1
                continue
            }
            // As ArgumentParser reads a value: an attached one is whatever follows `=`, but not
            // nothing; a separate one may be empty, and is an option if it starts with `-`.
            let value: Substring
            if let attached {
                guard !attached.isEmpty else { return nil }
                value = attached
                index += 1
            } else {
                guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("-") else { return nil }
                value = Substring(arguments[index + 1])
                index += 2
            }
            guard setOption(name, to: String(value), in: &options) else { return nil }
        }
        return options
    }

    /// Where PROGRAM (or the `--` before it) starts in `arguments`, as `parse` finds it: the
    /// first word that is `--` or does not start with `-`, an option's separate value aside.
    /// lnp-run-arguments gives ArgumentParser a `--` there: ArgumentParser otherwise takes a
    /// request of its own among PROGRAM's arguments (`PROGRAM --generate-completion-script
    /// bash` printed lnp-run's completion script, the program never run).
    public static func programStart(in arguments: [String]) -> Int {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" || !word.hasPrefix("-") { return index }
            let takesNext = !word.contains("=") && [
                "--errno", "--audit", "--usage-description", "--bonjour-services", "--attribution", "--prompt-timeout",
                "--generate-completion-script",
            ].contains(word)
            index += takesNext ? 2 : 1
        }
        return arguments.count
    }

    /// Whether `name` is a flag (then set).
    private static func setFlag(_ name: Substring, in options: inout RunOptions) -> Bool {
        switch name {
        case "--allow": options.policy = .allow
        case "--deny": options.policy = .deny
        case "--audit-all": options.auditAll = true
        case "--summary": options.summary = true
        case "--deny-while-asking": options.denyWhileAsking = true
        case "--preload-only": options.preloadOnly = true
        case "--strict": options.strict = true
        default: return false
        }
        return true
    }

    /// Whether `name` is an option that takes a value and `value` is one (then set); if not,
    /// ArgumentParser says why.
    private static func setOption(_ name: Substring, to value: String, in options: inout RunOptions) -> Bool {
        switch name {
        case "--errno": options.errnoName = value
        case "--audit": options.audit = value
        case "--usage-description": options.usageDescription = value
        case "--bonjour-services": options.bonjourServices = value
        case "--attribution":
            guard let attribution = RunOptions.Attribution(rawValue: value) else { return false }
            options.attribution = attribution
        case "--prompt-timeout":
            guard let seconds = Int(value) else { return false }
            options.promptTimeout = seconds
        default: return false
        }
        return true
    }

    /// A command line `parse` reads as `options`: each option that is not its default once,
    /// its value attached unless it is empty (which only a separate word can carry), then `--`
    /// and the program's command line.
    public static func words(for options: RunOptions) -> [String] {
        var words: [String] = []
        func add(_ name: String, _ value: String?) {
            guard let value else { return }
            words += value.isEmpty ? [name, ""] : [name + "=" + value]
        }
        if let policy = options.policy { words.append("--" + policy.rawValue) }
        add("--errno", options.errnoName)
        add("--audit", options.audit)
        if options.auditAll { words.append("--audit-all") }
        if options.summary { words.append("--summary") }
        if options.attribution != RunOptions.defaultAttribution { add("--attribution", options.attribution.rawValue) }
        if options.denyWhileAsking { words.append("--deny-while-asking") }
        if options.promptTimeout != RunOptions.defaultPromptTimeout { add("--prompt-timeout", String(options.promptTimeout)) }
        if options.preloadOnly { words.append("--preload-only") }
        if options.strict { words.append("--strict") }
        add("--usage-description", options.usageDescription)
        add("--bonjour-services", options.bonjourServices)
        return words + (options.command.first == "--" ? options.command : ["--"] + options.command)
    }
}
