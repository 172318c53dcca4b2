import Foundation
import Testing
@testable import LNPStore

private let file = "/etc/lnp/decisions.conf"

private func entry(_ path: String, _ state: ProgramState, line: Int) -> Decision {
    Decision(path: path, state: state, source: .administrator(file: file, line: line))
}

private func failure(_ line: Int, _ reason: String) -> AdministratorFileFailure {
    AdministratorFileFailure(path: file, line: line, reason: reason)
}

@Suite("AdministratorDecisions")
struct AdministratorDecisionsTests {
    @Test func entriesInFileOrder() throws {
        let text = """
            # printers may be reached by the print tools
            allow /usr/bin/lpstat

              deny\t/opt/legacy tool/bin/agent  \r
            \t# an indented comment
            allow   /usr/bin/../bin/curl
            deny /opt/#hash
            """
        let decisions = try AdministratorDecisions.parse(text, path: file)
        #expect(decisions.entries == [
            entry("/usr/bin/lpstat", .allowed, line: 2),
            entry("/opt/legacy tool/bin/agent", .denied, line: 4),
            entry("/usr/bin/curl", .allowed, line: 6),
            entry("/opt/#hash", .denied, line: 7),
        ])
        #expect(decisions.decision(for: "/opt/legacy tool/bin/agent")?.state == .denied)
        #expect(decisions.decision(for: "/usr/bin/curl")?.source == .administrator(file: file, line: 6))
        #expect(decisions.decision(for: "/usr/bin/wget") == nil)
    }

    @Test func emptyAndCommentOnlyFiles() throws {
        #expect(try AdministratorDecisions.parse("", path: file).entries == [])
        #expect(try AdministratorDecisions.parse("\n# nothing\n\n", path: file).entries == [])
    }

    @Test(arguments: [
        ("allow /a\npermit /b\n", failure(2, "expected 'allow PATH' or 'deny PATH'")),
        ("\n\nallow\n", failure(3, "expected 'allow PATH' or 'deny PATH'")),
        ("allow/usr/bin/x", failure(1, "expected 'allow PATH' or 'deny PATH'")),
        ("Allow /usr/bin/x", failure(1, "expected 'allow PATH' or 'deny PATH'")),
        ("deny usr/bin/x", failure(1, "the program must be an absolute path: usr/bin/x")),
        ("deny ~/bin/x", failure(1, "the program must be an absolute path: ~/bin/x")),
        ("allow /a\n# c\ndeny /a\n", failure(3, "/a is already decided on line 1")),
        ("allow /usr/bin/x\nallow /usr/./bin/x\n", failure(2, "/usr/bin/x is already decided on line 1")),
    ])
    func malformedLines(text: String, expected: AdministratorFileFailure) {
        #expect(throws: expected) { _ = try AdministratorDecisions.parse(text, path: file) }
    }

    @Test func failureDescriptions() {
        #expect(failure(3, "expected 'allow PATH' or 'deny PATH'").description
            == "/etc/lnp/decisions.conf:3: expected 'allow PATH' or 'deny PATH'")
        #expect(AdministratorFileFailure(path: file, line: 0, reason: "permission denied").description
            == "/etc/lnp/decisions.conf: permission denied")
    }

    @Test func loadingFiles() throws {
        let directory = try makeTemporaryDirectory()
        #expect(try AdministratorDecisions.load(path: directory + "/missing.conf").entries == [], "no file, no entries")
        #expect(try AdministratorDecisions.load(path: directory + "/no/such/dir.conf").entries == [])

        try writeFile(directory + "/decisions.conf", Array("deny /usr/bin/nc\n".utf8))
        #expect(try AdministratorDecisions.load(path: directory + "/decisions.conf").entries
            == [Decision(path: "/usr/bin/nc", state: .denied, source: .administrator(file: directory + "/decisions.conf", line: 1))])

        try FileManager.default.createDirectory(atPath: directory + "/dir.conf", withIntermediateDirectories: false)
        #expect(throws: AdministratorFileFailure(path: directory + "/dir.conf", line: 0, reason: "is a directory")) {
            _ = try AdministratorDecisions.load(path: directory + "/dir.conf")
        }
        try writeFile(directory + "/binary.conf", [0x61, 0x6c, 0xff, 0xfe, 0x0a])
        #expect(throws: AdministratorFileFailure(path: directory + "/binary.conf", line: 0, reason: "not UTF-8 text")) {
            _ = try AdministratorDecisions.load(path: directory + "/binary.conf")
        }
    }
}

@Suite("AdministratorDecisions paths")
struct AdministratorPathTests {
    @Test(arguments: [
        ("/usr/bin/x", "/usr/bin/x"), ("/usr/./bin//x", "/usr/bin/x"), ("/usr/bin/x/", "/usr/bin/x"),
        ("/a/../b", "/b"), ("/", "/"), ("/opt/my tool/.hidden", "/opt/my tool/.hidden"), ("/a/..b/c.", "/a/..b/c."),
    ])
    func pathsAreNormalizedAsProgramsAreNamed(path: String, expected: String) {
        #expect(AdministratorDecisions.normalized(path) == expected)
    }
}
