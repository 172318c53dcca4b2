import Testing
@testable import lnp_run
import lnp_run_arguments

/// lnp-run reads the plain forms of its command line by hand (PlainArguments) and leaves the
/// rest to ArgumentParser (in lnp-run-arguments): where the hand reads a command line,
/// ArgumentParser must read it the same; where it would not be sure, it must leave it; and
/// what ArgumentParser reads, lnp-run-arguments passes back to lnp-run in a form the hand reads.
@Suite("Plain arguments")
struct PlainArgumentsTests {
    /// Command lines the hand reads.
    static let plain: [[String]] = [
        [], ["true"], ["--", "true"], ["true", "--allow"], ["--allow", "true", "-x"], ["--allow"],
        ["--allow", "--", "true"], ["--deny", "--", "/usr/bin/curl", "-s", "http://10.0.0.1/"],
        ["--", "--allow"], ["--", "--"], ["--", "prog", "---x"], ["--allow", "--", "prog", "---x"], ["--", "-h"], ["--", ""], [""], ["help"], ["--allow", "--", "--help"],
        ["--audit", "/tmp/a.jsonl", "--audit-all", "--", "true"], ["--audit=/tmp/a.jsonl", "--", "true"],
        ["--audit=a=b", "--", "x"], ["--audit", "syslog", "--summary", "--", "x"],
        ["--errno", "EPERM", "--summary", "--", "x"], ["--errno=13", "--", "x"], ["--errno", "nonsense", "--", "x"],
        ["--attribution", "user", "--", "x"], ["--attribution=app", "--", "x"],
        ["--prompt-timeout", "5", "--deny-while-asking", "--", "x"], ["--prompt-timeout=007", "--", "x"],
        ["--prompt-timeout", "+5", "--", "x"], ["--prompt-timeout", "0", "--", "x"],
        ["--preload-only", "--", "x"], ["--strict", "--", "x"], ["--allow", "--strict", "--preload-only", "--", "x"],
        ["--usage-description", "Finds printers on this network", "--", "x"], ["--usage-description", "a=b", "--", "x"],
        ["--audit", "", "--", "x"], ["--usage-description", "", "--", "x"], ["--usage-description=-x", "--", "x"],
        ["--audit=--summary", "--", "x"], ["--prompt-timeout=-5", "--", "x"], ["--errno=-5", "--", "x"],
        ["--bonjour-services", "_ipp._tcp,_http._tcp", "--", "x"], ["--bonjour-services=*", "--", "x"],
        ["--deny", "--errno", "ECONNREFUSED", "--audit", "/dev/stderr", "--audit-all", "--summary", "--attribution", "user",
         "--deny-while-asking", "--prompt-timeout", "9", "--usage-description", "u", "--bonjour-services", "_ipp._tcp",
         "--", "prog", "--deny", "arg"],
    ]

    /// Command lines left to ArgumentParser: help, completions, mistakes, values it might
    /// read otherwise.
    static let notPlain: [[String]] = [
        ["-h"], ["--help"], ["--allow", "--help", "--", "x"], ["-"], ["-x", "--", "x"], ["--bogus", "--", "x"],
        ["--allow", "--deny", "--", "x"], ["--deny", "--allow", "--", "x"], ["--allow", "--allow", "--", "x"],
        ["--summary", "--summary", "--", "x"], ["--audit", "a", "--audit", "b", "--", "x"],
        ["--audit"], ["--audit", "--", "x"], ["--audit", "-", "--", "x"], ["--audit=", "--", "x"], ["--usage-description=", "--", "x"],
        ["--errno", "-5", "--", "x"], ["--attribution", "nobody", "--", "x"], ["--prompt-timeout", "five", "--", "x"],
        ["--prompt-timeout", "5s", "--", "x"], ["--summary=yes", "--", "x"], ["--generate-completion-script", "bash"],
        ["--generate-completion-script=zsh"], ["---completion", "--", "--allow"], ["--experimental-dump-help"],
        ["--version"], ["-allow", "--", "x"], ["--Allow", "--", "x"], ["prog", "---x"], ["--allow", "prog", "a", "---"],
    ]

    @Test(arguments: plain)
    func theHandReadsAsArgumentParserDoes(_ arguments: [String]) throws {
        let byHand = try #require(PlainArguments.parse(arguments), "read by hand: \(arguments)")
        #expect(try LNPRun.parsedByArgumentParser(arguments) == byHand, "\(arguments)")
    }

    @Test(arguments: notPlain)
    func theRestIsArgumentParsers(_ arguments: [String]) {
        #expect(PlainArguments.parse(arguments) == nil, "\(arguments)")
    }

    /// Every command line ArgumentParser reads, of both lists and with an unusual value of
    /// each option, written back as lnp-run-arguments writes it, is read by hand as the same.
    @Test(arguments: plain + notPlain + [
        ["--audit", "a", "--audit", "", "--allow", "--", "x"], ["--attribution", "user", "--attribution", "app", "x", "---y"],
        ["--usage-description", "x", "--usage-description=-v", "--bonjour-services=--", "--errno", "13", "--", "p"],
        ["--summary", "--preload-only", "--strict", "--audit-all", "--deny-while-asking", "--deny", "--prompt-timeout", "30", "p"],
    ])
    func whatArgumentParserReadsIsPassedOnWhole(_ arguments: [String]) throws {
        guard var options = try? LNPRun.parsedByArgumentParser(arguments) else { return }
        if options.command.first != "--" { options.command.insert("--", at: 0) }
        let words = PlainArguments.words(for: options)
        #expect(PlainArguments.parse(words) == options, "\(arguments) written as \(words)")
    }

    @Test func whatTheHandReads() throws {
        let options = try #require(PlainArguments.parse(["--deny", "--audit=/tmp/a", "--prompt-timeout", "9", "--", "curl", "-v"]))
        #expect(options == RunOptions(policy: .deny, audit: "/tmp/a", promptTimeout: 9, command: ["--", "curl", "-v"]))
    }
    /// lnp-run-arguments gives ArgumentParser a `--` where PROGRAM starts (`programStart`): a
    /// request of ArgumentParser's own among PROGRAM's arguments is the program's argument.
    @Test func argumentParsersOwnRequestsAmongTheProgramsArgumentsAreTheProgramsArguments() throws {
        let line = ["--audit", "a", "--audit", "b", "prog", "--generate-completion-script", "bash"]
        let start = PlainArguments.programStart(in: line)
        #expect(start == 4)
        var passed = line
        passed.insert("--", at: start)
        #expect(try LNPRun.parsedByArgumentParser(passed).command == ["--", "prog", "--generate-completion-script", "bash"])
        #expect(PlainArguments.programStart(in: ["--generate-completion-script", "bash"]) == 2)
        #expect(PlainArguments.programStart(in: ["--audit=x", "--", "p"]) == 1)
        #expect(PlainArguments.programStart(in: ["--bogus", "p"]) == 1)
    }

    /// The hand's two lists of options — those that take a value, where PROGRAM starts — are
    /// ArgumentParser's, read from its help: an option added to lnp-run-arguments and not to
    /// the hand would move where PROGRAM starts.
    @Test func theHandKnowsEveryOptionArgumentParserKnows() throws {
        let help = LNPRun.helpMessage(columns: 200)
        var options: [(name: String, takesValue: Bool)] = []
        for line in help.split(separator: "\n") where line.hasPrefix("  --") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            options.append((String(words[0]), words.count > 1 && words[1].hasPrefix("<")))
        }
        #expect(options.count >= 12, "\(help)")
        let valid = ["--attribution": "user", "--prompt-timeout": "5"]
        for (name, takesValue) in options where name != "--help" && name != "--version" {
            let line = takesValue ? [name, valid[name] ?? "x", "prog"] : [name, "prog"]
            #expect(PlainArguments.programStart(in: line) == line.count - 1, "\(line)")
            #expect(PlainArguments.parse(line)?.command == ["prog"], "the hand reads \(line)")
        }
    }

}
