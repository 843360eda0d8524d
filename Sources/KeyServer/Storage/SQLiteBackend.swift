// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
import SQLite

/// `Database` over one SQLite file (the SQLite module: WAL, a busy timeout, foreign keys).
final class SQLiteBackend: Database {
    let connection: SQLiteDatabase
    var engine: DatabaseEngine { .sqlite }

    init(path: String) throws(DatabaseError) {
        connection = try DatabaseError.fromSQLite { () throws(SQLiteError) in try SQLiteDatabase(path: path) }
    }

    func execute(_ sql: String) throws(DatabaseError) {
        try DatabaseError.fromSQLite { () throws(SQLiteError) in try connection.execute(sql) }
    }

    @discardableResult
    func query(_ sql: String, _ parameters: [DatabaseValue]) throws(DatabaseError) -> [[DatabaseValue]] {
        let rows = try DatabaseError.fromSQLite { () throws(SQLiteError) in try connection.query(sql, parameters.map(\.sqlite)) }
        return try rows.map { row throws(DatabaseError) in
            try row.map { value throws(DatabaseError) in
                switch value {
                case .null: .null
                case .integer(let number): .integer(number)
                case .text(let text): .text(text)
                case .blob(let bytes): .blob(bytes)
                case .real:
                    // No column of the key server's schema holds one.
                    throw DatabaseError(engine: .sqlite, code: "20", message: "a REAL value where none is stored", operation: String(sql.prefix(60)))
                }
            }
        }
    }

    /// BEGIN IMMEDIATE: writers queue at the start, not midway.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        do {
            return try connection.transaction(body)
        } catch let error as SQLiteError {
            throw DatabaseError(error)
        }
    }

    /// Always taken: inside BEGIN IMMEDIATE this connection already holds the file's only write
    /// lock, against every other connection and process on it.
    func lock(_ lock: DatabaseLock, wait: Bool) throws(DatabaseError) -> Bool { true }
}

extension DatabaseValue {
    fileprivate var sqlite: SQLiteValue {
        switch self {
        case .null: .null
        case .integer(let number): .integer(number)
        case .text(let text): .text(text)
        case .blob(let bytes): .blob(bytes)
        }
    }
}
