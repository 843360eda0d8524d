// SPDX-License-Identifier: GPL-3.0-or-later

/// Where a store keeps its tables: an SQLite file (one file, nothing to set up), or a PostgreSQL
/// database that several server replicas share.
package enum DatabaseLocation: Sendable, Equatable {
    case sqlite(path: String)
    /// A libpq connection string: `postgresql://user@host:5432/db` or `host=... dbname=...`.
    case postgreSQL(connectionString: String)

    /// A new connection, owned by the caller.
    func open() throws(DatabaseError) -> any Database {
        switch self {
        case .sqlite(let path): try SQLiteBackend(path: path)
        case .postgreSQL(let connectionString): try PostgreSQLBackend(connectionString: connectionString)
        }
    }
}
