// SPDX-License-Identifier: GPL-3.0-or-later

internal import CSQLite

/// One connection to an SQLite database file, owned by whoever made it (an actor, in practice):
/// not Sendable. Write-ahead logging, a busy timeout and foreign keys are on.
package final class SQLiteDatabase {
    private let handle: OpaquePointer
    package let path: String

    /// Opens (creating if needed) the database at `path`.
    package init(path: String, busyTimeoutMilliseconds: Int32 = 5000) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard result == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let opened { sqlite3_close_v2(opened) }
            throw SQLiteError(code: result, message: message, operation: "opening \(path)")
        }
        handle = opened
        self.path = path
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA foreign_keys = ON")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit { sqlite3_close_v2(handle) }

    func error(_ code: Int32, _ operation: String) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), operation: operation)
    }

    /// Runs one or more statements without results (schema, pragmas).
    package func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        if result != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error \(result)"
            sqlite3_free(message)
            throw SQLiteError(code: result, message: text, operation: String(sql.prefix(60)))
        }
    }

    /// Runs `sql` with `parameters` (?1, ?2...) and returns every row.
    @discardableResult
    package func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try SQLiteStatement(database: self, handle: handle, sql: sql)
        try statement.bind(parameters)
        var rows = [[SQLiteValue]]()
        while let row = try statement.step() { rows.append(row) }
        return rows
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in a transaction (BEGIN IMMEDIATE: writers queue at the start, not midway);
    /// rolled back if it throws, so nothing is half stored.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A prepared statement; finalized when it goes.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase
    /// SQLITE_TRANSIENT: SQLite copies bound text and blobs (the macro is a cast Swift cannot import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(database: SQLiteDatabase, handle: OpaquePointer, sql: String) throws(SQLiteError) {
        self.database = database
        var prepared: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard result == SQLITE_OK, let prepared else { throw database.error(result, "preparing \(sql.prefix(60))") }
        statement = prepared
    }

    deinit { sqlite3_finalize(statement) }

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(statement, index)
            case .integer(let number): result = sqlite3_bind_int64(statement, index, number)
            case .real(let number): result = sqlite3_bind_double(statement, index, number)
            case .text(let text): result = sqlite3_bind_text(statement, index, text, -1, Self.transient)
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
            }
            guard result == SQLITE_OK else { throw database.error(result, "binding parameter \(index)") }
        }
    }

    /// The next row, or nil when done.
    func step() throws(SQLiteError) -> [SQLiteValue]? {
        let result = sqlite3_step(statement)
        if result == SQLITE_DONE { return nil }
        guard result == SQLITE_ROW else { throw database.error(result, "running a statement") }
        return (0..<sqlite3_column_count(statement)).map { column in
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
            case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(statement, column)))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(statement, column))
                guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
                return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
            default: return .null
            }
        }
    }
}
