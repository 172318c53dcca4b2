import Foundation
import Testing
@testable import LNPStore
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A store and an administrator's file in a fresh directory.
private struct Setup {
    let root: String
    var store: String { root + "/state/lnp/decisions.sqlite" }
    var administrator: String { root + "/decisions.conf" }

    init() throws {
        root = try makeTemporaryDirectory()
    }

    func record(_ state: ProgramState, _ path: String) throws {
        let store = try #require(try DecisionStore.open(path: store, create: true))
        try store.record(state, for: ProgramIdentity(path: path, buildID: "ab", isScript: false))
    }

    func administrate(_ text: String) throws {
        try writeFile(administrator, Array(text.utf8))
    }

    func lookup(_ path: String) -> Lookup {
        DecisionLookup.lookup(path, storePath: store, administratorPath: administrator)
    }
}

@Suite("DecisionLookup")
struct DecisionLookupTests {
    @Test func nothingDecided() throws {
        let setup = try Setup()
        #expect(setup.lookup("/usr/bin/curl") == .undetermined)
        var info = stat()
        #expect(stat(setup.root + "/state", &info) != 0, "looking up creates nothing")
        try setup.record(.allowed, "/usr/bin/wget")
        #expect(setup.lookup("/usr/bin/curl") == .undetermined)
    }

    @Test func theUsersDecision() throws {
        let setup = try Setup()
        try setup.record(.allowed, "/usr/bin/curl")
        try setup.administrate("deny /usr/bin/wget\n")
        guard case .decided(let decision) = setup.lookup("/usr/bin/curl") else {
            Issue.record("decided")
            return
        }
        #expect(decision.state == .allowed && decision.source == .user && decision.buildID == "ab")
    }

    @Test func theAdministratorFirst() throws {
        let setup = try Setup()
        try setup.record(.allowed, "/usr/bin/curl")
        try setup.administrate("# no curl here\ndeny /usr/bin/curl\n")
        #expect(setup.lookup("/usr/bin/curl") == .decided(
            Decision(path: "/usr/bin/curl", state: .denied, source: .administrator(file: setup.administrator, line: 2))))
    }

    @Test func aMalformedAdministratorFileMakesEverythingUnavailable() throws {
        let setup = try Setup()
        try setup.record(.allowed, "/usr/bin/curl")
        try setup.administrate("allow /usr/bin/curl\nallow curl\n")
        guard case .unavailable(let message) = setup.lookup("/usr/bin/curl") else {
            Issue.record("unavailable")
            return
        }
        #expect(message.contains(setup.administrator + ":2: the program must be an absolute path: curl"))
    }

    @Test func aCorruptStoreIsUnavailable() throws {
        let setup = try Setup()
        try FileManager.default.createDirectory(atPath: setup.root + "/state/lnp", withIntermediateDirectories: true)
        let garbage = Array(String(repeating: "garbage ", count: 1000).utf8)
        try writeFile(setup.store, garbage)
        #expect(setup.lookup("/usr/bin/curl")
            == .unavailable("the decision store \(setup.store) is unreadable: file is not a database"))
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: setup.store))) == garbage)
        // The administrator's entry is still the answer for what it decides.
        try setup.administrate("allow /usr/bin/curl\n")
        #expect(setup.lookup("/usr/bin/curl") == .decided(
            Decision(path: "/usr/bin/curl", state: .allowed, source: .administrator(file: setup.administrator, line: 1))))
    }

    /// lnp-run looks a program up each time it starts one: how long that takes with a store
    /// of about a hundred decisions and a small administrator's file.
    @Test func lookupIsQuick() throws {
        let setup = try Setup()
        let store = try #require(try DecisionStore.open(path: setup.store, create: true))
        for index in 0..<100 {
            try store.record(index % 3 == 0 ? .denied : .allowed,
                             for: ProgramIdentity(path: "/usr/bin/tool\(index)", buildID: "0123456789abcdef\(index)", isScript: false))
        }
        try setup.administrate((0..<10).map { "allow /opt/admin\($0)\n" }.joined())
        let rounds = 200
        let start = ContinuousClock.now
        for index in 0..<rounds {
            guard case .decided = setup.lookup("/usr/bin/tool\(index % 100)") else {
                Issue.record("decided")
                return
            }
        }
        let perLookup = (ContinuousClock.now - start) / rounds
        let missing = ContinuousClock.now
        for _ in 0..<rounds { _ = setup.lookup("/usr/bin/none") }
        let perMiss = (ContinuousClock.now - missing) / rounds
        print("DecisionLookup: \(perLookup) per lookup (decided), \(perMiss) (undetermined), store of 100 rows")
        #expect(perLookup < .milliseconds(50))
    }
}
