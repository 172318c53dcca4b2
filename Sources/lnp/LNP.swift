import ArgumentParser

@main
struct LNP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lnp",
        abstract: "Local network privacy for Linux programs.",
        discussion: "Run programs under it with lnp-run; see what lnp decides with these commands.",
        subcommands: [
            Check.self, ListCommand.self, AllowCommand.self, DenyCommand.self, ResetCommand.self, ReportCommand.self,
            InspectCommand.self,
        ])
}
