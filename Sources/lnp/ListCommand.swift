import ArgumentParser
import Foundation
import LNPStore
import LNPTools

/// `lnp list`: every decided program, the administrator's and the person's.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the programs decided for you: allowed or denied the local network.",
        discussion: """
            Shows the administrator's decisions (from \(AdministratorDecisions.defaultPath), which take \
            precedence) and yours. A note says when the file at a decided path has a different build-id \
            now (lnp reset --changed asks again for those) or is missing.
            """)

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    func run() throws {
        let administrator = try Decisions.administrator()
        let store = try Decisions.store(create: false)
        let users = try withStore { () throws(StoreFailure) in try store?.all() ?? [] }
        let decided = Set(administrator.entries.map(\.path))
        let decisions = (administrator.entries + users.filter { !decided.contains($0.path) })
            .sorted { $0.path < $1.path }

        if json {
            try Output.json(decisions.map(DecisionReport.init))
            return
        }
        if decisions.isEmpty {
            print("no decisions yet (programs ask when they first use the local network)")
            return
        }
        var rows = [["PROGRAM", "STATE", "SOURCE", "DECIDED", "BUILD-ID", "LAST USED", "NOTE"]]
        for decision in decisions {
            let now = FileNow(decision.path)
            let source: String
            switch decision.source {
            case .user: source = "user"
            case .administrator(let file, let line): source = "admin \(file):\(line)"
            }
            rows.append([
                decision.path, decision.state.rawValue, source, decision.decidedAt.map(Times.local) ?? "-",
                decision.buildID.map(FileNow.short) ?? "-", decision.lastUsed.map(Times.local) ?? "-",
                FileNow.note(decision, now),
            ])
        }
        for line in Output.table(rows) { print(line) }
    }
}
