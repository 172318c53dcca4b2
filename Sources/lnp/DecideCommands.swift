import ArgumentParser
import Foundation
import LNPStore
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// `lnp allow PROGRAM…`
struct AllowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow",
        abstract: "Allow programs the local network, without asking.",
        discussion: Decide.discussion)

    @OptionGroup var options: Decide

    func run() throws { try options.decide(.allowed) }
}

/// `lnp deny PROGRAM…`
struct DenyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny",
        abstract: "Deny programs the local network, without asking.",
        discussion: Decide.discussion)

    @OptionGroup var options: Decide

    func run() throws { try options.decide(.denied) }
}

struct Decide: ParsableArguments {
    static let discussion = """
        A PROGRAM with a slash is a path; a bare name is looked up in PATH. For a script, name the \
        script (python3 tool.py is decided as tool.py). The decision is kept with the program's build-id, \
        so that lnp list can tell when the file is replaced by another build.
        """

    @Flag(help: "Print the decisions as a JSON array.")
    var json = false

    @Argument(help: ArgumentHelp("The programs.", valueName: "PROGRAM"))
    var programs: [String] = []

    func decide(_ state: ProgramState) throws {
        if programs.isEmpty { throw Output.fail("give at least one program", status: 64) }
        try Decisions.refuseInsideARun()
        // Everything is checked before anything is recorded.
        var identities: [ProgramIdentity] = []
        for name in programs {
            let identity = ProgramIdentity.named(name)
            if let problem = ProgramPathProblem.ofDecided(name, path: identity.path) {
                throw Output.fail(problem.message, status: problem.status)
            }
            identities.append(identity)
        }
        let administrator = try Decisions.administrator()
        for identity in identities {
            if let decision = administrator.decision(for: identity.path) {
                throw Output.fail(Decisions.refusal(identity.path, decision))
            }
        }
        guard let store = try Decisions.store(create: true) else { throw Output.fail("cannot create the store") }
        var recorded: [Decision] = []
        for identity in identities {
            if !identity.isScript && identity.buildID == nil && (try? ELFFile.read(path: identity.path)) != nil {
                Output.warn("\(identity.path) has no build-id; a rebuilt file at this path keeps the decision")
            }
            try withStore { () throws(StoreFailure) in
                try store.record(state, for: identity)
                if let decision = try store.decision(for: identity.path) { recorded.append(decision) }
            }
        }
        if json {
            try Output.json(recorded.map(DecisionReport.init))
        } else {
            for decision in recorded { print("\(decision.state.rawValue) \(UntrustedText.visible(decision.path))") }
        }
    }
}
