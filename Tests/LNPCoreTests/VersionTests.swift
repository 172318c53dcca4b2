import Foundation
import Testing
import LNPVersion
@testable import lnp_run_arguments

/// `--version`: the project's number, written once, and the build's git revision.
@Suite("Version")
struct VersionTests {
    @Test func theLineNamesTheCommandTheNumberAndTheRevision() {
        #expect(ProjectVersion.line(for: "lnp-run") == "lnp-run \(ProjectVersion.number) (git \(ProjectVersion.revision))")
        let parts = ProjectVersion.number.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, "\(ProjectVersion.number)")
        let revision = ProjectVersion.revision
        #expect(revision == "unknown" || (revision.count >= 7 && revision.allSatisfy(\.isHexDigit)), "\(revision)")
    }

    /// ArgumentParser's passthrough argument captures its own requests when they come first
    /// among the words it does not know: lnp-run-arguments answers them itself.
    @Test func lnpRunArgumentsAnswersArgumentParsersOwnRequests() throws {
        #expect(LNPRun.answer(toRequest: "--version") == ProjectVersion.line(for: "lnp-run"))
        #expect(LNPRun.answer(toRequest: "--help") == LNPRun.helpMessage())
        let dump = try #require(LNPRun.answer(toRequest: "--experimental-dump-help"))
        #expect(dump.contains("\"commandName\" : \"lnp-run\""), "\(dump.prefix(400))")
        // ArgumentParser's description, without the help subcommand it adds; the rest as it was.
        var original = try #require(JSONSerialization.jsonObject(with: Data(LNPRun._dumpHelp().utf8)) as? [String: Any])
        var command = try #require(original["command"] as? [String: Any])
        let added = try #require(command["subcommands"] as? [[String: Any]])
        #expect(added.map { $0["commandName"] as? String } == ["help"])
        command["subcommands"] = nil
        original["command"] = command
        let answered = try #require(JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        #expect(NSDictionary(dictionary: answered).isEqual(to: original))
        #expect(LNPRun.answer(toRequest: "--deny") == nil)
        #expect(LNPRun.answer(toRequest: "--versions") == nil)
        #expect(try LNPRun.parsedByArgumentParser(["--deny", "--version"]).command == ["--version"])
    }
}
