import ArgumentParser

/// lnp-run's completion scripts: ArgumentParser's, which complete lnp-run's options and their
/// values, with two changes every wrapper's completion makes (sudo's, nice's):
///  - the words after `--` are PROGRAM's command line, completed as the shell completes that
///    command (`lnp-run -- cu<TAB>` offers curl; `lnp-run -- curl --<TAB>` curl's options);
///  - no `help` subcommand, which ArgumentParser offers for every command: lnp-run has no
///    subcommands, and `lnp-run help` runs a program named help.
/// Each change names the text of ArgumentParser's script it relies on, and `nil` says that text
/// is gone (a newer ArgumentParser): a unit test then fails rather than a shell.
enum CompletionScript {
    static func forLNPRun(_ shell: CompletionShell) -> String? {
        let generated = LNPRun.completionScript(for: shell)
        switch shell {
        case .bash: return bash(generated)
        case .zsh: return zsh(generated)
        case .fish: return fish(generated)
        default: return nil
        }
    }

    /// bash: a function of our own wraps ArgumentParser's `_lnp-run` and is the one `complete`
    /// names (the later `complete` for a command replaces the earlier).
    static func bash(_ generated: String) -> String? {
        guard generated.contains("_lnp-run() {"), generated.contains("complete -o filenames -F _lnp-run lnp-run") else {
            return nil
        }
        return generated + """

            # After `--`, PROGRAM's command line: with bash-completion, completed as its own
            # (as for sudo); without, a command name, then file names.
            _lnp-run_with_program() {
                local i
                for ((i = 1; i < COMP_CWORD; i++)); do
                    [[ ${COMP_WORDS[i]} == -- ]] || continue
                    if declare -F _command_offset >/dev/null; then
                        _command_offset $((i + 1))
                    elif ((COMP_CWORD == i + 1)); then
                        COMPREPLY=($(compgen -c -- "${COMP_WORDS[COMP_CWORD]}"))
                    else
                        COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
                    fi
                    return
                done
                _lnp-run "$@"
                local -a kept=()
                local word
                for word in "${COMPREPLY[@]}"; do
                    [[ $word == help ]] || kept+=("$word")
                done
                COMPREPLY=("${kept[@]}")
            }
            complete -o filenames -F _lnp-run_with_program lnp-run

            """
    }

    /// zsh: `_arguments`' specs for the words after the options become a command name and then
    /// that command's own completion (`_normal`), as in zsh's _sudo; the `help` states go unused.
    static func zsh(_ generated: String) -> String? {
        let replaced = [
            ("        '*:PROGRAM:'\n", ""),
            ("        '(-): :->command'\n", "        '(-)1:program:_command_names -e'\n"),
            ("        '(-)*:: :->arg'\n", "        '(-)*::arguments:_normal'\n"),
        ]
        var script = generated
        for (old, new) in replaced {
            guard script.contains(old) else { return nil }
            script = script.replacing(old, with: new)
        }
        return script
    }

    /// fish: the line that offers `help` goes; a completion for the words after `--` comes, given
    /// to fish's own __fish_complete_subcommand as for sudo.
    static func fish(_ generated: String) -> String? {
        var lines = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let helpLines = lines.indices.filter { lines[$0].hasPrefix("complete -c 'lnp-run'") && lines[$0].contains("-fa 'help'") }
        guard helpLines.count == 1 else { return nil }
        lines.remove(at: helpLines[0])
        return lines.joined(separator: "\n") + """

            # After `--`, PROGRAM's command line, completed as its own.
            function __lnp-run_program_line
                set -l tokens (commandline -opc) (commandline -ct)
                set -l at (contains -i -- -- $tokens); or return 1
                set -q tokens[(math $at + 1)]; or return 1
                printf '%s\\0' $tokens[(math $at + 1)..]
            end
            function __lnp-run_complete_program
                __fish_complete_subcommand --commandline (__lnp-run_program_line | string split0)
            end
            complete -c 'lnp-run' -n '__lnp-run_program_line >/dev/null' -xa '(__lnp-run_complete_program)'

            """
    }
}
