import Foundation
import GRDB
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A person's decisions, in an SQLite database of their own (through GRDB). Many processes
/// may use it at once: WAL journal, every write in an immediate transaction, and a busy
/// timeout long enough for any other writer's transaction.
public final class DecisionStore: Sendable {
    public let path: String
    let queue: DatabaseQueue

    /// How long a write waits for another process's transaction.
    static let busyTimeout: TimeInterval = 15

    init(path: String, queue: DatabaseQueue) {
        self.path = path
        self.queue = queue
    }

    /// $XDG_STATE_HOME/lnp/decisions.sqlite (when XDG_STATE_HOME is absolute), else
    /// $HOME/.local/state/lnp/decisions.sqlite, else in the password database's home.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        StoreLocation.defaultPath(environment: environment)
    }

    /// Opens the store at `path`. Without `create`, a missing store gives nil (nothing is
    /// decided yet) and no file is made. With it, the directory (0700, parents too) and the
    /// database (0600) are made when missing. A file that is not a database, or cannot be
    /// read, throws — and is left exactly as it is.
    public static func open(path: String, create: Bool) throws(StoreFailure) -> DecisionStore? {
        if create {
            try StoreLocation.prepare(path)
        } else {
            var info = stat()
            if stat(path, &info) != 0 {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw StoreFailure(path: path, reason: StoreLocation.errorText(errno))
            }
        }
        var configuration = Configuration()
        configuration.label = "lnp.decisions"
        configuration.busyMode = .timeout(busyTimeout)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try StoreSchema.prepare(queue, path: path)
            return DecisionStore(path: path, queue: queue)
        } catch {
            throw failure(error, path: path, writing: false)
        }
    }

    /// The person's decision for the program at `path`, if any.
    public func decision(for path: String) throws(StoreFailure) -> Decision? {
        try reading { db in
            try Row.fetchOne(db, sql: "SELECT * FROM decisions WHERE path = ?", arguments: [path]).map(Self.decision)
        }
    }

    /// Records `state` for the program (a new decision, or a changed one: its build-id and
    /// time become these; when it was last used is kept).
    public func record(_ state: ProgramState, for identity: ProgramIdentity, at date: Date = Date()) throws(StoreFailure) {
        try writing { db in
            try db.execute(
                sql: """
                    INSERT INTO decisions (path, build_id, state, decided_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (path) DO UPDATE SET
                        build_id = excluded.build_id, state = excluded.state, decided_at = excluded.decided_at
                    """,
                arguments: [identity.path, identity.buildID, state.rawValue, date.timeIntervalSince1970])
        }
    }

    /// Notes that a program used its decision; nothing when it has none.
    public func markUsed(_ path: String, at date: Date = Date()) throws(StoreFailure) {
        try writing { db in
            try db.execute(
                sql: "UPDATE decisions SET last_used = ? WHERE path = ?", arguments: [date.timeIntervalSince1970, path])
        }
    }

    /// Every decision, sorted by path.
    public func all() throws(StoreFailure) -> [Decision] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT * FROM decisions ORDER BY path").map(Self.decision)
        }
    }

    /// Makes the program undetermined again; false if it had no decision.
    @discardableResult
    public func reset(_ path: String) throws(StoreFailure) -> Bool {
        try writing { db in
            try db.execute(sql: "DELETE FROM decisions WHERE path = ?", arguments: [path])
            return db.changesCount > 0
        }
    }

    /// Makes every program undetermined again; how many had a decision.
    @discardableResult
    public func resetAll() throws(StoreFailure) -> Int {
        try writing { db in
            try db.execute(sql: "DELETE FROM decisions")
            return db.changesCount
        }
    }

    // MARK: - Access

    private func reading<T>(_ body: (Database) throws -> T) throws(StoreFailure) -> T {
        do {
            // One statement: it is atomic without a transaction of its own.
            return try queue.unsafeRead(body)
        } catch {
            throw Self.failure(error, path: path, writing: false)
        }
    }

    private func writing<T>(_ body: (Database) throws -> T) throws(StoreFailure) -> T {
        do {
            var result: T?
            try queue.inTransaction(.immediate) { db in
                result = try body(db)
                return .commit
            }
            return result!
        } catch {
            throw Self.failure(error, path: path, writing: true)
        }
    }

    struct MalformedRow: Error, CustomStringConvertible {
        var description: String
    }

    static func decision(_ row: Row) throws -> Decision {
        let pathValue: DatabaseValue = row["path"]
        guard let path = String.fromDatabaseValue(pathValue) else {
            throw MalformedRow(description: "a decision without a path")
        }
        let stateValue: DatabaseValue = row["state"]
        guard let stateText = String.fromDatabaseValue(stateValue), let state = ProgramState(rawValue: stateText) else {
            throw MalformedRow(description: "the decision for \(path) has an unknown state")
        }
        func time(_ column: String) throws -> Date? {
            let value: DatabaseValue = row[column]
            if value.isNull { return nil }
            guard let seconds = Double.fromDatabaseValue(value) else {
                throw MalformedRow(description: "the decision for \(path) has a malformed \(column)")
            }
            return Date(timeIntervalSince1970: seconds)
        }
        let buildIDValue: DatabaseValue = row["build_id"]
        return Decision(
            path: path, buildID: String.fromDatabaseValue(buildIDValue), state: state, decidedAt: try time("decided_at"),
            lastUsed: try time("last_used"), source: .user)
    }

    /// A GRDB or SQLite error as a person should read it.
    static func failure(_ error: any Error, path: String, writing: Bool) -> StoreFailure {
        if let failure = error as? StoreFailure { return failure }
        guard let error = error as? DatabaseError else {
            return StoreFailure(path: path, reason: "\(error)", writing: writing)
        }
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return StoreFailure(path: path, reason: "file is not a database")
        case .SQLITE_CORRUPT:
            return StoreFailure(path: path, reason: "the database is corrupt")
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            // SQLite's "unable to open database file" says less than the system's reason.
            // (Asked without opening the file: closing a descriptor of it would drop the
            // locks other connections of this process hold on it.)
            var info = stat()
            if stat(path, &info) != 0 { return StoreFailure(path: path, reason: StoreLocation.errorText(errno)) }
            if info.st_mode & S_IFMT == S_IFDIR { return StoreFailure(path: path, reason: "is a directory") }
            if access(path, R_OK) != 0 { return StoreFailure(path: path, reason: StoreLocation.errorText(errno)) }
            return StoreFailure(path: path, reason: error.message ?? "\(error)", writing: writing)
        default:
            return StoreFailure(path: path, reason: error.message ?? "\(error)", writing: writing)
        }
    }
}
