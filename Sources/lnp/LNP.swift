import ArgumentParser
import LNPTools
import LNPVersion

@main
struct LNP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lnp",
        abstract: "Local network privacy for Linux programs.",
        discussion: "Run programs under it with lnp-run; see what lnp decides with these commands.",
        version: ProjectVersion.line(for: "lnp"),
        subcommands: [
            Check.self, ListCommand.self, AllowCommand.self, DenyCommand.self, ResetCommand.self, ReportCommand.self,
            InspectCommand.self,
        ])

    /// Every error of lnp in one line, `lnp: …`, as lnp's own failures are written
    /// (`Output.fail`): ArgumentParser's message, which names the offending value, without its
    /// usage lines. Help is printed as ArgumentParser prints it.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let code as ExitCode {
            exit(withError: code)  // (its line, if any, was written where it arose)
        } catch {
            guard exitCode(for: error) != .success else { exit(withError: error) }
            Output.error(OneLine.of(message(for: error)))
            exit(withError: ExitCode(exitCode(for: error).rawValue))
        }
    }
}
