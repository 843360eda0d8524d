// SPDX-License-Identifier: GPL-3.0-or-later

package import PostgreSQL

/// What `KeyStore` and `Verifier` need of a database, so that they run on SQLite or PostgreSQL
/// with their SQL written once: placeholders are `?1`, `?2`... (PostgreSQL's side rewrites them),
/// integers are 64-bit, new rows report their id with `RETURNING`, and only the schema's column
/// types differ (`Engine.types`).
///
/// One owner per connection (an actor), so not Sendable.
protocol Database: AnyObject {
    var engine: DatabaseEngine { get }

    /// Runs one or more statements without parameters or results (schema).
    func execute(_ sql: String) throws(DatabaseError)

    /// Runs one statement with `parameters` for `?1`, `?2`... and returns every row.
    @discardableResult
    func query(_ sql: String, _ parameters: [DatabaseValue]) throws(DatabaseError) -> [[DatabaseValue]]

    /// Runs `body` in a transaction, rolled back if it throws. On PostgreSQL a body that loses a
    /// race with another session (a deadlock, a serialization failure) runs again, so it must
    /// not do anything outside the database that cannot be done twice.
    func transaction<T>(_ body: () throws -> T) throws -> T

    /// Inside a transaction: takes `lock` until the transaction ends, waiting for another
    /// session that holds it when `wait`, or else returning false at once.
    func lock(_ lock: DatabaseLock, wait: Bool) throws(DatabaseError) -> Bool
}

extension Database {
    @discardableResult
    func query(_ sql: String) throws(DatabaseError) -> [[DatabaseValue]] {
        try query(sql, [])
    }

    /// Runs `sql` (CREATE ... IF NOT EXISTS) under the schema lock: two PostgreSQL sessions
    /// creating the same table at once can both pass IF NOT EXISTS and one then fails on the
    /// catalog's unique index, which replicas starting together would hit.
    func createSchema(_ sql: String) throws(DatabaseError) {
        do {
            try transaction {
                _ = try lock(.schema, wait: true)
                try execute(sql)
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(engine: engine, code: "", message: "\(error)", operation: "creating the schema")
        }
    }
}

package enum DatabaseEngine: String, Sendable {
    case sqlite = "SQLite"
    case postgreSQL = "PostgreSQL"

    /// The column types schema text is written with.
    var types: ColumnTypes {
        switch self {
        // INTEGER PRIMARY KEY is SQLite's rowid; AUTOINCREMENT keeps ids of deleted rows unused.
        case .sqlite: ColumnTypes(integer: "INTEGER", blob: "BLOB", identity: "INTEGER PRIMARY KEY AUTOINCREMENT")
        // Unix seconds need 64 bits; bytea is PostgreSQL's byte string.
        case .postgreSQL: ColumnTypes(integer: "BIGINT", blob: "BYTEA", identity: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
        }
    }
}

/// The schema's per-engine words.
struct ColumnTypes {
    var integer: String
    var blob: String
    /// A 64-bit id the database assigns.
    var identity: String
}

/// Locks held until the end of a transaction. On PostgreSQL they are advisory locks, whose keys
/// share one 64-bit space with anything else using the database: these spell "gaen" in their
/// high bytes to keep clear of other applications.
enum DatabaseLock: Int64 {
    case schema = 0x6761_656E_0000_0001
    /// Choosing and recording an export batch: one replica at a time.
    case export = 0x6761_656E_0000_0002
}

/// A value in or out of a statement, on either engine: the PostgreSQL client's own value type
/// (null, integer, text, blob: the four the schema stores), so that engine needs no mapping and
/// SQLite's maps onto it once.
package typealias DatabaseValue = PostgreSQLValue
