// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
import SQLite

/// A failed database call on either engine: the engine's code and message, and what was being done.
package struct DatabaseError: Error, Equatable, Sendable, CustomStringConvertible {
    package var engine: DatabaseEngine
    /// SQLite's extended result code in decimal, or PostgreSQL's SQLSTATE.
    package var code: String
    package var message: String
    package var operation: String

    package init(engine: DatabaseEngine, code: String, message: String, operation: String) {
        self.engine = engine
        self.code = code
        self.message = message
        self.operation = operation
    }

    init(_ error: SQLiteError) {
        self.init(engine: .sqlite, code: String(error.code), message: error.message, operation: error.operation)
    }

    init(_ error: PostgreSQLError) {
        self.init(engine: .postgreSQL, code: error.sqlState, message: error.message, operation: error.operation)
    }

    /// `body`'s result, an SQLite module error turned into this one.
    static func fromSQLite<T>(_ body: () throws(SQLiteError) -> T) throws(DatabaseError) -> T {
        do {
            return try body()
        } catch {
            throw DatabaseError(error)
        }
    }

    /// `body`'s result, a PostgreSQL module error turned into this one.
    static func fromPostgreSQL<T>(_ body: () throws(PostgreSQLError) -> T) throws(DatabaseError) -> T {
        do {
            return try body()
        } catch {
            throw DatabaseError(error)
        }
    }

    /// A unique key, a check or a foreign key refused the row.
    package var isConstraint: Bool {
        switch engine {
        case .sqlite: (Int32(code) ?? 0) & 0xFF == 19  // SQLITE_CONSTRAINT
        case .postgreSQL: code.hasPrefix("23")
        }
    }

    /// A unique or primary key refused the row.
    package var isUniqueViolation: Bool {
        switch engine {
        case .sqlite: code == "2067" || code == "1555"  // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY
        case .postgreSQL: code == "23505"
        }
    }

    /// The transaction lost a race with another session; running it again is the remedy.
    /// (SQLite's writers queue at BEGIN IMMEDIATE instead.)
    package var isTransient: Bool { engine == .postgreSQL && (code == "40001" || code == "40P01") }

    package var description: String { "\(operation): \(message) (\(engine.rawValue) \(code))" }
}
