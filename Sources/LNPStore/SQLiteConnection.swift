import CSQLite

/// One connection to an SQLite database through the system's libsqlite3: statements with
/// bound values, rows read by column, transactions, and SQLite's own codes and messages
/// when something fails. One thread at a time (DecisionStore holds it under a lock).
final class SQLiteConnection {
    private let handle: OpaquePointer

    /// What SQLite said: its primary result code (SQLITE_NOTADB, SQLITE_CANTOPEN, …) and its
    /// message.
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var message: String

        var description: String { message }
    }

    /// A value bound to a statement's `?`.
    enum Value {
        case text(String)
        case real(Double)
        case null
    }

    /// Opens the database at `path` for reading and writing (for reading alone when the file
    /// is write-protected, as SQLite does); `create` makes the file if it is missing.
    init(path: String, create: Bool) throws(Failure) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let failure = opened.map(Self.failure) ?? Failure(code: code, message: String(cString: sqlite3_errstr(code)))
            sqlite3_close_v2(opened)
            throw failure
        }
        handle = opened
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
    func waitWhenBusy(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs `sql` (one statement) with `arguments`, calling `row` for each row of its result.
    func run(_ sql: String, _ arguments: [Value] = [], row: (Row) throws -> Void = { _ in }) throws {
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &prepared, nil) == SQLITE_OK, let statement = prepared else {
            throw Self.failure(handle)
        }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch argument {
            case .text(let text): code = sqlite3_bind_text(statement, position, text, -1, Self.transient)
            case .real(let number): code = sqlite3_bind_double(statement, position, number)
            case .null: code = sqlite3_bind_null(statement, position)
            }
            guard code == SQLITE_OK else { throw Self.failure(handle) }
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: try row(Row(statement: statement))
            case SQLITE_DONE: return
            default: throw Self.failure(handle)
            }
        }
    }

    /// The rows the last statement changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// `body` in a transaction: committed if it returns, rolled back if it throws. An
    /// immediate one takes the write lock at once (waiting while another connection holds it).
    func transaction<T>(immediate: Bool, _ body: () throws -> T) throws -> T {
        try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? run("ROLLBACK") }
            throw error
        }
    }

    /// A row of a statement's result, read while the statement is on it.
    struct Row {
        let statement: OpaquePointer

        /// Column `index` as text: TEXT, or a BLOB that is UTF-8; nil for NULL and numbers.
        func text(_ index: Int32) -> String? {
            switch sqlite3_column_type(statement, index) {
            case SQLITE_TEXT:
                guard let characters = sqlite3_column_text(statement, index) else { return nil }
                let count = Int(sqlite3_column_bytes(statement, index))
                return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF8.self)
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(statement, index))
                guard let bytes = sqlite3_column_blob(statement, index) else { return count == 0 ? "" : nil }
                return String(validating: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
            default:
                return nil
            }
        }

        /// Column `index` as a number: INTEGER or REAL; nil otherwise.
        func number(_ index: Int32) -> Double? {
            switch sqlite3_column_type(statement, index) {
            case SQLITE_INTEGER, SQLITE_FLOAT: return sqlite3_column_double(statement, index)
            default: return nil
            }
        }

        func isNull(_ index: Int32) -> Bool {
            sqlite3_column_type(statement, index) == SQLITE_NULL
        }
    }

    /// SQLite copies a bound text before the call returns (SQLITE_TRANSIENT, a macro Swift
    /// cannot import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func failure(_ handle: OpaquePointer) -> Failure {
        Failure(code: sqlite3_extended_errcode(handle) & 0xff, message: String(cString: sqlite3_errmsg(handle)))
    }
}
