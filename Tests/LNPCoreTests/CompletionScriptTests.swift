import ArgumentParser
import Testing
@testable import lnp_run_arguments

/// lnp-run's completion scripts are ArgumentParser's with a wrapper's changes; each change
/// finds the text it changes in the scripts this ArgumentParser writes (nil when it does not).
@Suite("lnp-run's completion scripts")
struct CompletionScriptTests {
    @Test(arguments: [CompletionShell.bash, .zsh, .fish])
    func everyChangeFindsItsText(_ shell: CompletionShell) throws {
        let script = try #require(CompletionScript.forLNPRun(shell), "ArgumentParser's \(shell) script changed")
        #expect(script.contains("deny-while-asking"), "the options stay")
    }

    @Test func bashNamesItsOwnFunctionLast() throws {
        let script = try #require(CompletionScript.forLNPRun(.bash))
        let completes = script.split(separator: "\n").filter { $0.hasPrefix("complete ") }
        #expect(completes.last == "complete -o filenames -F _lnp-run_with_program lnp-run")
    }

    @Test func zshHasOneRestOfTheLineAndItIsTheProgramsOwn() throws {
        let script = try #require(CompletionScript.forLNPRun(.zsh))
        #expect(!script.contains("'*:PROGRAM:'") && !script.contains("->command'"))
        #expect(script.contains("'(-)*::arguments:_normal'"))
    }

    @Test func fishOffersNoHelpSubcommand() throws {
        let script = try #require(CompletionScript.forLNPRun(.fish))
        #expect(!script.contains("-fa 'help'"))
        #expect(script.contains("__fish_complete_subcommand --commandline"))
    }

    @Test func aScriptThatIsNotArgumentParsersIsNotChanged() {
        #expect(CompletionScript.bash("complete -F _other other") == nil)
        #expect(CompletionScript.zsh("#compdef other") == nil)
        #expect(CompletionScript.fish("complete -c other") == nil)
    }
}
