// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import KeyServer
import PostgreSQL
import SQLite
import Testing

/// The storage engines a behaviour test runs on: SQLite always, PostgreSQL when its binaries
/// are there (or GAEND_POSTGRES_BIN says where they must be).
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgreSQL

    static var available: [Engine] { PostgreSQLServer.binaries == nil ? [.sqlite] : [.sqlite, .postgreSQL] }

    var testDescription: String { rawValue }
}

/// Fresh storage for one test: SQLite files in a temporary directory, or a new database on the
/// suite's PostgreSQL server (`.postgreSQLServer`). The directory exists in both cases, for
/// exports and keys.
struct TestDatabase {
    let engine: Engine
    let directory: TemporaryDirectory
    /// The PostgreSQL database's URL.
    let url: String?

    init(_ engine: Engine) throws {
        self.engine = engine
        directory = try TemporaryDirectory()
        url = engine == .postgreSQL ? try PostgreSQLServer.required().makeDatabase() : nil
    }

    /// Where the keys are (a PostgreSQL database holds both sets of tables).
    var keys: DatabaseLocation { url.map { .postgreSQL(connectionString: $0) } ?? .sqlite(path: directory.path + "/keys.sqlite") }
    var verification: DatabaseLocation { url.map { .postgreSQL(connectionString: $0) } ?? .sqlite(path: directory.path + "/verification.sqlite") }

    /// Rows in `table` of the keys' database, counted on a connection of its own.
    func count(_ table: String) throws -> Int64 {
        if let url {
            return try PostgreSQLConnection(url).query("SELECT count(*) FROM \(table)").first?.first?.integer ?? -1
        }
        return try SQLiteDatabase(path: directory.path + "/keys.sqlite").query("SELECT count(*) FROM \(table)").first?.first?.integer ?? -1
    }
}
