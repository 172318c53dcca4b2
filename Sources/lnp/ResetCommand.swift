import ArgumentParser
import Foundation
import LNPStore
import LNPTools

/// `lnp reset PROGRAM… | --all | --changed`: programs become undetermined again, and ask
/// the next time they use the local network.
struct ResetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Forget your decisions, so that programs ask again.",
        discussion: """
            Give programs, --all, or --changed (the programs whose file now has another build-id \
            than the one decided: a rebuilt or replaced binary). The administrator's decisions are \
            not yours to reset.
            """)

    @Flag(help: "Forget all of your decisions.")
    var all = false

    @Flag(help: "Forget the decisions for programs whose file has changed since (another build-id).")
    var changed = false

    @Flag(help: "Print {\"count\": N, \"programs\": [...]} as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The programs.", valueName: "PROGRAM"))
    var programs: [String] = []

    struct Report: Encodable {
        var count: Int
        var programs: [String]
    }

    func run() throws {
        let modes = (programs.isEmpty ? 0 : 1) + (all ? 1 : 0) + (changed ? 1 : 0)
        if modes != 1 { throw Output.fail("give programs, --all or --changed (exactly one of them)", status: 64) }
        try Decisions.refuseInsideARun()
        let store = try Decisions.store(create: false)

        var reset: [String] = []
        var lines: [String] = []
        if all {
            reset = try withStore { () throws(StoreFailure) in try store?.all().map(\.path) ?? [] }
            let count = try withStore { () throws(StoreFailure) in try store?.resetAll() ?? 0 }
            if json { return try Output.json(Report(count: count, programs: reset)) }
            print("reset \(count) decision\(count == 1 ? "" : "s")")
            return
        } else if changed {
            let decisions = try withStore { () throws(StoreFailure) in try store?.all() ?? [] }
            for decision in decisions {
                let now = FileNow(decision.path)
                guard FileNow.hasChanged(decision, now) else { continue }
                if try withStore({ () throws(StoreFailure) in try store?.reset(decision.path) ?? false }) {
                    reset.append(decision.path)
                    lines.append("reset \(UntrustedText.visible(decision.path)) (\(FileNow.note(decision, now)))")
                }
            }
            if lines.isEmpty && !json { lines.append("no decided program has changed") }
        } else {
            let paths = programs.map { ProgramIdentity.named($0).path }
            // Everything is checked before anything is reset. A decision for a program since
            // removed is still reset; without one, a path that is not a program says why.
            for (name, path) in zip(programs, paths) {
                if try withStore({ () throws(StoreFailure) in try store?.decision(for: path) }) != nil { continue }
                if let decision = try Decisions.administrator().decision(for: path) {
                    throw Output.fail(Decisions.refusal(path, decision))
                }
                if let problem = ProgramPathProblem.ofDecided(name, path: path) {
                    throw Output.fail(problem.message, status: problem.status)
                }
                throw Output.fail("\(UntrustedText.visible(path)) has no decision to reset")
            }
            for path in paths where try withStore({ () throws(StoreFailure) in try store?.reset(path) ?? false }) {
                reset.append(path)
                lines.append("reset \(UntrustedText.visible(path))")
            }
        }
        if json { return try Output.json(Report(count: reset.count, programs: reset)) }
        for line in lines { print(line) }
    }
}
