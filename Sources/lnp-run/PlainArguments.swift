/// lnp-run's command line read without ArgumentParser, when it is in a plain form: long
/// options, each at most once, spelled out (`--audit FILE` or `--audit=FILE`), then PROGRAM
/// (or `--` and PROGRAM) and its arguments. ArgumentParser's first parse costs more than the
/// rest of lnp-run's start (docs/benchmarks.md, "The launcher's start"); anything else —
/// help, a mistake, completions, a value that starts with `-` — is left to it, so that its
/// messages and its meaning stay the only ones.
enum PlainArguments {
    /// The options, or nil when ArgumentParser must read the command line.
    static func parse(_ arguments: [String]) -> RunOptions? {
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
            let value: Substring
            if let attached {
                value = attached
                index += 1
            } else {
                guard index + 1 < arguments.count else { return nil }
                value = Substring(arguments[index + 1])
                index += 2
            }
            guard !value.isEmpty, !value.hasPrefix("-"), setOption(name, to: String(value), in: &options) else { return nil }
        }
        return options
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
            guard let attribution = LNPRun.AttributionOption(rawValue: value) else { return false }
            options.attribution = attribution
        case "--prompt-timeout":
            guard let seconds = Int(value) else { return false }
            options.promptTimeout = seconds
        default: return false
        }
        return true
    }
}
