import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// The store's tables. Each migration runs in an immediate transaction (GRDB's migrator);
/// a new version of lnp adds a migration here, never edits one.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 decisions") { db in
            // Times are seconds since 1970 (a Double round-trips a Date exactly).
            try db.execute(sql: """
                CREATE TABLE decisions (
                    path TEXT NOT NULL PRIMARY KEY,
                    build_id TEXT,
                    state TEXT NOT NULL CHECK (state IN ('allowed', 'denied')),
                    decided_at REAL NOT NULL,
                    last_used REAL
                )
                """)
        }
        return migrator
    }

    /// Brings the database at `queue` to the current schema. Nothing is written when it is
    /// already there (the usual case, on lnp-run's path): one read transaction tells.
    /// Otherwise the setting up is serialized among processes and threads by a lock on the
    /// store's directory (never on the database file: closing a descriptor of it would drop
    /// the locks SQLite holds on it in this process), and done by whoever comes first.
    static func prepare(_ queue: DatabaseQueue, path: String) throws {
        let migrator = self.migrator
        if try isCurrent(queue, migrator) { return }
        let lock = DirectoryLock(of: path)
        defer { lock.release() }
        if try isCurrent(queue, migrator) { return }
        try queue.writeWithoutTransaction { db in
            // WAL lets lnp-run read while lnp writes; it stays set in the file.
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                if mode != "wal" { throw DatabaseError(message: "could not set the WAL journal mode") }
            }
        }
        try migrator.migrate(queue)
    }

    /// Whether every migration is applied, seen in one snapshot: the transaction's first
    /// statement reads, so that the migrator's own questions (is there a migrations table?
    /// what is in it?) cannot straddle another process's migration.
    static func isCurrent(_ queue: DatabaseQueue, _ migrator: DatabaseMigrator) throws -> Bool {
        try queue.read { db in
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
            return try migrator.hasCompletedMigrations(db)
        }
    }
}

/// An exclusive flock(2) on a file's directory, held while the store is set up.
struct DirectoryLock {
    let fd: Int32

    init(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        // Without it (a directory that cannot be opened), the migrator's transactions still
        // keep the database whole; only a simultaneous first use might report an error.
        if fd >= 0 {
            while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        }
    }

    func release() {
        if fd >= 0 { close(fd) }
    }
}
