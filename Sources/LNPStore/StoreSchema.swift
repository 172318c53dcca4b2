import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The store's tables, as migrations applied in order, each once. The applied ones are
/// named in the table `grdb_migrations`, as GRDB's migrator named them when lnp used GRDB,
/// so that a store made then is current now. A new version of lnp adds a migration here,
/// never edits one.
enum StoreSchema {
    static let migrations: [(identifier: String, sql: String)] = [
        // Times are seconds since 1970 (a Double round-trips microseconds exactly).
        ("v1 decisions", """
            CREATE TABLE decisions (
                path TEXT NOT NULL PRIMARY KEY,
                build_id TEXT,
                state TEXT NOT NULL CHECK (state IN ('allowed', 'denied')),
                decided_at REAL NOT NULL,
                last_used REAL
            )
            """),
    ]

    /// Brings the database to the current schema. Nothing is written when it is already
    /// there (the usual case, on lnp-run's path): one read transaction tells. Otherwise the
    /// setting up is serialized among processes and threads by a lock on the store's
    /// directory (never on the database file: closing a descriptor of it would drop the locks
    /// SQLite holds on it in this process), and done by whoever comes first.
    static func prepare(_ connection: SQLiteConnection, path: String) throws {
        if try isCurrent(connection) { return }
        let lock = DirectoryLock(of: path)
        defer { lock.release() }
        if try isCurrent(connection) { return }
        // WAL lets lnp-run read while lnp writes; it stays set in the file.
        var mode = ""
        try connection.run("PRAGMA journal_mode") { mode = $0.text(0) ?? "" }
        if mode != "wal" {
            try connection.run("PRAGMA journal_mode = WAL") { mode = $0.text(0) ?? "" }
            if mode != "wal" { throw SQLiteConnection.Failure(code: 1, message: "could not set the WAL journal mode") }
        }
        try connection.transaction(immediate: true) {
            try connection.run("CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = try appliedMigrations(connection)
            for migration in migrations where !applied.contains(migration.identifier) {
                try connection.run(migration.sql)
                try connection.run("INSERT INTO grdb_migrations (identifier) VALUES (?)", [.text(migration.identifier)])
            }
        }
    }

    /// Whether every migration is applied, seen in one snapshot: the transaction's first
    /// statement reads, so that the questions (is there a migrations table? what is in it?)
    /// cannot straddle another process's migration. A store migrated by a later lnp (with
    /// migrations this one does not know) is current too.
    static func isCurrent(_ connection: SQLiteConnection) throws -> Bool {
        try connection.transaction(immediate: false) {
            let applied = try appliedMigrations(connection)
            return migrations.allSatisfy { applied.contains($0.identifier) }
        }
    }

    /// (An array: a Set of strings would cost lnp-run's start, which reads the store, a
    /// search of the binary's protocol conformances; there are a handful of migrations.)
    private static func appliedMigrations(_ connection: SQLiteConnection) throws -> [String] {
        var tables = 0
        try connection.run("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'") {
            tables = Int($0.number(0) ?? 0)
        }
        guard tables > 0 else { return [] }
        var applied: [String] = []
        try connection.run("SELECT identifier FROM grdb_migrations") { row in
            if let identifier = row.text(0) { applied.append(identifier) }
        }
        return applied
    }
}

/// An exclusive flock(2) on a file's directory, held while the store is set up.
struct DirectoryLock {
    let fd: Int32

    init(of path: String) {
        let directory = PathText.directory(of: path)
        fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        // Without it (a directory that cannot be opened), the transactions still keep the
        // database whole; only a simultaneous first use might report an error.
        if fd >= 0 {
            while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        }
    }

    func release() {
        if fd >= 0 { close(fd) }
    }
}
