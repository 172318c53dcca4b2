import Foundation
import Synchronization
import Testing
@testable import LNPStore
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

private func identity(_ path: String, _ buildID: String? = nil) -> ProgramIdentity {
    ProgramIdentity(path: path, buildID: buildID, isScript: buildID == nil)
}

private func mode(of path: String) -> mode_t {
    var info = stat()
    precondition(stat(path, &info) == 0, "\(path) exists")
    return info.st_mode & 0o7777
}

private func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
}

private func freshStore() throws -> (DecisionStore, String) {
    let path = try makeTemporaryDirectory() + "/lnp/decisions.sqlite"
    let store = try #require(try DecisionStore.open(path: path, create: true))
    return (store, path)
}

@Suite("DecisionStore")
struct DecisionStoreTests {
    @Test func roundTrip() throws {
        let (store, _) = try freshStore()
        let when = 1_790_000_000.123456
        try store.record(.allowed, for: identity("/usr/bin/curl", "abc123"), at: when)
        #expect(try store.decision(for: "/usr/bin/curl")
            == Decision(path: "/usr/bin/curl", buildID: "abc123", state: .allowed, decidedAt: when, lastUsed: nil, source: .user))
        #expect(try store.decision(for: "/usr/bin/wget") == nil)
    }

    @Test func recordingAgainUpdatesTheRow() throws {
        let (store, _) = try freshStore()
        let first = 1_790_000_000.0
        let used = 1_790_000_100.0
        let second = 1_790_000_200.0
        try store.record(.allowed, for: identity("/opt/tool", "aaaa"), at: first)
        try store.markUsed("/opt/tool", at: used)
        try store.record(.denied, for: identity("/opt/tool", "bbbb"), at: second)
        #expect(try store.all()
            == [Decision(path: "/opt/tool", buildID: "bbbb", state: .denied, decidedAt: second, lastUsed: used, source: .user)])
        try store.record(.denied, for: identity("/opt/tool", nil), at: second)
        #expect(try store.decision(for: "/opt/tool")?.buildID == nil, "a build-id that is gone is forgotten")
    }

    /// An answer at the prompt is used as it is given; `lnp allow` is not a use.
    @Test func aDecisionRecordedAsUsedIsLastUsedThen() throws {
        let (store, _) = try freshStore()
        let answered = 1_790_000_000.0
        try store.record(.allowed, for: identity("/opt/asked"), at: answered, used: true)
        #expect(try store.decision(for: "/opt/asked")?.lastUsed == answered)
        try store.record(.denied, for: identity("/opt/asked"), at: answered + 50)
        #expect(try store.decision(for: "/opt/asked")?.lastUsed == answered, "kept by a decision that is not a use")
        try store.record(.allowed, for: identity("/opt/asked"), at: answered + 90, used: true)
        #expect(try store.decision(for: "/opt/asked")?.lastUsed == answered + 90)
    }

    @Test func markUsedNeedsADecision() throws {
        let (store, _) = try freshStore()
        try store.markUsed("/usr/bin/nothing")
        #expect(try store.all() == [])
        try store.record(.denied, for: identity("/usr/bin/x"))
        let when = 1_800_000_000.5
        try store.markUsed("/usr/bin/x", at: when)
        #expect(try store.decision(for: "/usr/bin/x")?.lastUsed == when)
    }

    @Test func allIsSortedByPath() throws {
        let (store, _) = try freshStore()
        for path in ["/usr/bin/zz", "/opt/b", "/opt/a b", "/usr/bin/a"] { try store.record(.allowed, for: identity(path)) }
        #expect(try store.all().map(\.path) == ["/opt/a b", "/opt/b", "/usr/bin/a", "/usr/bin/zz"])
    }

    @Test func resetAndResetAll() throws {
        let (store, _) = try freshStore()
        for path in ["/a", "/b", "/c"] { try store.record(.allowed, for: identity(path)) }
        #expect(try store.reset("/b"))
        #expect(try !store.reset("/b"), "nothing left to reset")
        #expect(try store.all().map(\.path) == ["/a", "/c"])
        #expect(try store.resetAll() == 2)
        #expect(try store.resetAll() == 0)
        #expect(try store.all() == [])
    }

    @Test func decisionsPersistAcrossOpens() throws {
        let (store, path) = try freshStore()
        try store.record(.denied, for: identity("/bin/x", "01"))
        let again = try #require(try DecisionStore.open(path: path, create: false))
        #expect(try again.decision(for: "/bin/x")?.state == .denied)
        let journal = try again.reading { connection in
            var mode: String?
            try connection.run("PRAGMA journal_mode") { mode = $0.text(0) }
            return mode
        }
        #expect(journal == "wal")
    }

    @Test func createMakesPrivateDirectoriesAndFile() throws {
        let root = try makeTemporaryDirectory()
        let path = root + "/state/deeper/lnp/decisions.sqlite"
        _ = try #require(try DecisionStore.open(path: path, create: true))
        #expect(mode(of: root + "/state") == 0o700)
        #expect(mode(of: root + "/state/deeper/lnp") == 0o700)
        #expect(mode(of: path) == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: root + "/state/deeper/lnp")
            .filter { $0.hasPrefix(".decisions") }
        #expect(leftovers == [], "the temporary name is gone")
    }

    @Test func openingWithoutCreateMakesNothing() throws {
        let root = try makeTemporaryDirectory()
        #expect(try DecisionStore.open(path: root + "/lnp/decisions.sqlite", create: false) == nil)
        #expect(!exists(root + "/lnp"))
        try writeFile(root + "/file", [])
        #expect(try DecisionStore.open(path: root + "/file/decisions.sqlite", create: false) == nil,
                "a file where the directory would be: nothing decided either")
    }

    @Test(arguments: [false, true])
    func aFileThatIsNotADatabaseIsReportedAndLeftAlone(create: Bool) throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/decisions.sqlite"
        let garbage = Array(String(repeating: "this is not an SQLite database\n", count: 200).utf8)
        try writeFile(path, garbage, mode: 0o600)
        #expect(throws: StoreFailure(path: path, reason: "file is not a database")) {
            _ = try DecisionStore.open(path: path, create: create)
        }
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["decisions.sqlite"])
        #expect(mode(of: path) == 0o600)
    }

    @Test func aDirectoryWhereTheStoreShouldBe() throws {
        let path = try makeTemporaryDirectory() + "/decisions.sqlite"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: StoreFailure(path: path, reason: "is a directory")) {
            _ = try DecisionStore.open(path: path, create: false)
        }
    }

    @Test func failureDescriptions() {
        #expect(StoreFailure(path: "/x/decisions.sqlite", reason: "file is not a database").description
            == "the decision store /x/decisions.sqlite is unreadable: file is not a database")
        #expect(StoreFailure(path: "/x/d", reason: "attempt to write a readonly database", writing: true).description
            == "the decision store /x/d cannot be written: attempt to write a readonly database")
    }

    @Test func defaultPath() {
        #expect(DecisionStore.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/lnp/decisions.sqlite")
        #expect(DecisionStore.defaultPath(environment: ["XDG_STATE_HOME": "/s/", "HOME": "/h"]) == "/s/lnp/decisions.sqlite")
        #expect(DecisionStore.defaultPath(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"])
            == "/h/.local/state/lnp/decisions.sqlite", "a relative XDG_STATE_HOME is ignored")
        #expect(DecisionStore.defaultPath(environment: ["XDG_STATE_HOME": "", "HOME": "/h"]) == "/h/.local/state/lnp/decisions.sqlite")
        let home = String(cString: getpwuid(getuid()).pointee.pw_dir)
        #expect(DecisionStore.defaultPath(environment: [:]) == (home == "/" ? "" : home) + "/.local/state/lnp/decisions.sqlite")
        // This process's own environment, as lnp-run reads it (without a dictionary of it).
        var own: [String: String] = [:]
        for name in ["XDG_STATE_HOME", "HOME"] { if let value = getenv(name) { own[name] = String(cString: value) } }
        #expect(DecisionStore.defaultPath() == DecisionStore.defaultPath(environment: own))
    }

    /// A store made by lnp's earlier versions (through GRDB's migrator, which named its
    /// migrations in `grdb_migrations`) is current: read as it is, nothing migrated again.
    @Test func aStoreMadeThroughGRDBIsCurrent() throws {
        let path = try makeTemporaryDirectory() + "/decisions.sqlite"
        let connection = try SQLiteConnection(path: path, create: true)
        try connection.run("PRAGMA journal_mode = WAL")
        try connection.run("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        try connection.run("INSERT INTO grdb_migrations VALUES ('v1 decisions')")
        try connection.run(StoreSchema.migrations[0].sql)
        try connection.run(
            "INSERT INTO decisions (path, build_id, state, decided_at) VALUES ('/usr/bin/x', 'ab', 'denied', 1790000000.5)")
        let store = try #require(try DecisionStore.open(path: path, create: false))
        #expect(try store.decision(for: "/usr/bin/x")
            == Decision(path: "/usr/bin/x", buildID: "ab", state: .denied, decidedAt: 1_790_000_000.5, source: .user))
        #expect(try StoreSchema.isCurrent(connection))
    }

    /// An empty database file (another process made it and has not set it up yet) is set up
    /// by whoever opens it first.
    @Test func anEmptyFileIsSetUp() throws {
        let path = try makeTemporaryDirectory() + "/decisions.sqlite"
        try writeFile(path, [], mode: 0o600)
        let store = try #require(try DecisionStore.open(path: path, create: false))
        #expect(try store.all() == [])
        try store.record(.allowed, for: identity("/bin/y"))
        #expect(try store.decision(for: "/bin/y")?.state == .allowed)
    }

    /// A row the schema cannot have made (written by another program) is reported, not guessed.
    @Test func aMalformedRowIsReported() throws {
        let (store, path) = try freshStore()
        let connection = try SQLiteConnection(path: path, create: false)
        try connection.run("PRAGMA ignore_check_constraints = ON")
        try connection.run("INSERT INTO decisions (path, state, decided_at) VALUES ('/bin/z', 'maybe', 1)")
        #expect(throws: StoreFailure(path: path, reason: "the decision for /bin/z has an unknown state")) {
            _ = try store.decision(for: "/bin/z")
        }
    }

    /// Eight writers, each with its own connection, all creating the store at once: every
    /// decision is there.
    @Test func concurrentWritersLoseNothing() throws {
        let path = try makeTemporaryDirectory() + "/lnp/decisions.sqlite"
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        for writer in 0..<8 {
            done.enter()
            // Threads of their own, so that all eight really write at once.
            let thread = Thread {
                defer { done.leave() }
                do {
                    let store = try #require(try DecisionStore.open(path: path, create: true))
                    for index in 0..<50 {
                        let state: ProgramState = index % 2 == 0 ? .allowed : .denied
                        try store.record(state, for: identity("/w\(writer)/p\(index)", "\(writer)\(index)"))
                        if index % 10 == 0 { _ = try store.all() }
                    }
                } catch {
                    failures.withLock { $0.append("\(writer): \(error)") }
                }
            }
            thread.start()
        }
        done.wait()
        #expect(failures.withLock { $0 } == [])
        let store = try #require(try DecisionStore.open(path: path, create: false))
        let all = try store.all()
        #expect(all.count == 400)
        #expect(Set(all.map(\.path)).count == 400)
        #expect(all.filter { $0.state == .allowed }.count == 200)
    }
}
