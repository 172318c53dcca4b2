import CSQLite
import LNPTools
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A person's decisions, in an SQLite database of their own (the system's libsqlite3). Many
/// processes may use it at once: WAL journal, every write in an immediate transaction, and a
/// busy timeout long enough for any other writer's transaction. Foundation-free, so that
/// lnp-run, which looks a program up each time it starts one, need not load Foundation.
public final class DecisionStore: @unchecked Sendable {
    public let path: String
    /// Used under `lock` alone (which makes the store Sendable).
    private let connection: SQLiteConnection
    private let lock = Mutex(())

    /// How long a write waits for another process's transaction, in milliseconds.
    static let busyTimeout: Int32 = 15_000

    init(path: String, connection: SQLiteConnection) {
        self.path = path
        self.connection = connection
    }

    /// $XDG_STATE_HOME/lnp/decisions.sqlite (when XDG_STATE_HOME is absolute), else
    /// $HOME/.local/state/lnp/decisions.sqlite, else in the password database's home.
    public static func defaultPath(environment: [String: String]) -> String {
        StoreLocation.defaultPath(environment: environment)
    }

    /// The same, from this process's environment.
    public static func defaultPath() -> String {
        StoreLocation.defaultPath()
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
        do {
            // The file is there (prepare made it, or stat saw it): SQLite makes none.
            let connection = try SQLiteConnection(path: path, create: false)
            connection.waitWhenBusy(milliseconds: busyTimeout)
            try StoreSchema.prepare(connection, path: path)
            return DecisionStore(path: path, connection: connection)
        } catch {
            throw failure(error, path: path, writing: false)
        }
    }

    /// The person's decision for the program at `path`, if any.
    public func decision(for path: String) throws(StoreFailure) -> Decision? {
        try reading { connection in
            var decision: Decision?
            try connection.run("SELECT \(Self.columns) FROM decisions WHERE path = ?", [.text(path)]) { row in
                decision = try Self.decision(row)
            }
            return decision
        }
    }

    /// Records `state` for the program (a new decision, or a changed one: its build-id and
    /// time become these). When it was last used is kept, or becomes this time when `used`:
    /// an answer at the prompt is given as the program uses it.
    public func record(_ state: ProgramState, for identity: ProgramIdentity, at seconds: Double = StoreClock.now(),
                       used: Bool = false) throws(StoreFailure)
    {
        try writing { connection in
            try connection.run(
                """
                INSERT INTO decisions (path, build_id, state, decided_at, last_used) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (path) DO UPDATE SET
                    build_id = excluded.build_id, state = excluded.state, decided_at = excluded.decided_at,
                    last_used = COALESCE(excluded.last_used, last_used)
                """,
                [.text(identity.path), identity.buildID.map { .text($0) } ?? .null, .text(state.rawValue), .real(seconds),
                 used ? .real(seconds) : .null])
        }
    }

    /// Notes that a program used its decision; nothing when it has none.
    public func markUsed(_ path: String, at seconds: Double = StoreClock.now()) throws(StoreFailure) {
        try writing { connection in
            try connection.run("UPDATE decisions SET last_used = ? WHERE path = ?", [.real(seconds), .text(path)])
        }
    }

    /// Every decision, sorted by path.
    public func all() throws(StoreFailure) -> [Decision] {
        try reading { connection in
            var decisions: [Decision] = []
            try connection.run("SELECT \(Self.columns) FROM decisions ORDER BY path") { decisions.append(try Self.decision($0)) }
            return decisions
        }
    }

    /// Makes the program undetermined again; false if it had no decision.
    @discardableResult
    public func reset(_ path: String) throws(StoreFailure) -> Bool {
        try writing { connection in
            try connection.run("DELETE FROM decisions WHERE path = ?", [.text(path)])
            return connection.changes > 0
        }
    }

    /// Makes every program undetermined again; how many had a decision.
    @discardableResult
    public func resetAll() throws(StoreFailure) -> Int {
        try writing { connection in
            try connection.run("DELETE FROM decisions")
            return connection.changes
        }
    }

    // MARK: - Access

    /// One statement: it is atomic without a transaction of its own.
    func reading<T>(_ body: (SQLiteConnection) throws -> T) throws(StoreFailure) -> T {
        do {
            lock._unsafeLock()
            defer { lock._unsafeUnlock() }
            return try body(connection)
        } catch {
            throw Self.failure(error, path: path, writing: false)
        }
    }

    private func writing<T>(_ body: (SQLiteConnection) throws -> T) throws(StoreFailure) -> T {
        do {
            lock._unsafeLock()
            defer { lock._unsafeUnlock() }
            return try connection.transaction(immediate: true) { try body(connection) }
        } catch {
            throw Self.failure(error, path: path, writing: true)
        }
    }

    static let columns = "path, build_id, state, decided_at, last_used"

    struct MalformedRow: Error, CustomStringConvertible {
        var description: String
    }

    /// A row of `columns`.
    static func decision(_ row: SQLiteConnection.Row) throws -> Decision {
        guard let path = row.text(0) else { throw MalformedRow(description: "a decision without a path") }
        guard let stateText = row.text(2), let state = ProgramState(rawValue: stateText) else {
            throw MalformedRow(description: "the decision for \(path) has an unknown state")
        }
        func time(_ column: Int32, _ name: String) throws -> Double? {
            if row.isNull(column) { return nil }
            guard let seconds = row.number(column) else {
                throw MalformedRow(description: "the decision for \(path) has a malformed \(name)")
            }
            return seconds
        }
        return Decision(
            path: path, buildID: row.text(1), state: state, decidedAt: try time(3, "decided_at"),
            lastUsed: try time(4, "last_used"), source: .user)
    }

    /// An SQLite error as a person should read it.
    static func failure(_ error: any Error, path: String, writing: Bool) -> StoreFailure {
        if let failure = error as? StoreFailure { return failure }
        guard let error = error as? SQLiteConnection.Failure else {
            return StoreFailure(path: path, reason: "\(error)", writing: writing)
        }
        switch error.code {
        case SQLITE_NOTADB:
            return StoreFailure(path: path, reason: "file is not a database")
        case SQLITE_CORRUPT:
            return StoreFailure(path: path, reason: "the database is corrupt")
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH:
            // SQLite's "unable to open database file" says less than the system's reason.
            // (Asked without opening the file: closing a descriptor of it would drop the
            // locks other connections of this process hold on it.)
            var info = stat()
            if stat(path, &info) != 0 { return StoreFailure(path: path, reason: StoreLocation.errorText(errno)) }
            if info.st_mode & S_IFMT == S_IFDIR { return StoreFailure(path: path, reason: "is a directory") }
            if access(path, R_OK) != 0 { return StoreFailure(path: path, reason: StoreLocation.errorText(errno)) }
            return StoreFailure(path: path, reason: error.message, writing: writing)
        default:
            return StoreFailure(path: path, reason: error.message, writing: writing)
        }
    }
}
