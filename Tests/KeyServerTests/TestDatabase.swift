// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
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

    /// The key every verifier of a test stores codes under, as replicas share one.
    static func codeKey() throws -> CodeHMACKey { try CodeHMACKey(bytes: Array(1...32)) }

    /// Runs `sql` (statements without results) on the verification tables' database, on a
    /// connection of its own: to set up what an older version left.
    func executeOnVerification(_ sql: String) throws {
        if let url {
            try PostgreSQLConnection(url).execute(sql)
        } else {
            try SQLiteDatabase(path: directory.path + "/verification.sqlite").execute(sql)
        }
    }

    /// The rows of `sql` on the verification tables' database, every value as text (integers in
    /// decimal, NULL as "NULL"), read on a connection of its own.
    func verificationText(_ sql: String) throws -> [[String]] {
        if let url {
            return try PostgreSQLConnection(url).query(sql).map { $0.map { $0.text ?? $0.integer.map(String.init) ?? "NULL" } }
        }
        return try SQLiteDatabase(path: directory.path + "/verification.sqlite").query(sql).map { $0.map { $0.text ?? $0.integer.map(String.init) ?? "NULL" } }
    }

    /// The names of the verification database's tables.
    func verificationTables() throws -> Set<String> {
        let sql =
            url == nil
            ? "SELECT name FROM sqlite_master WHERE type = 'table'"
            : "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()"
        return Set(try verificationText(sql).compactMap(\.first))
    }

    /// With SQLite, the verification database's files as they are on disk (the database and its
    /// write-ahead log), as one run of bytes; with PostgreSQL, nothing.
    func verificationFileBytes() throws -> [UInt8] {
        guard url == nil else { return [] }
        return ["", "-wal"].flatMap { suffix in FileManager.default.contents(atPath: directory.path + "/verification.sqlite" + suffix).map(Array.init) ?? [] }
    }

    /// Rows in `table` of the keys' database, counted on a connection of its own.
    func count(_ table: String) throws -> Int64 {
        if let url {
            return try PostgreSQLConnection(url).query("SELECT count(*) FROM \(table)").first?.first?.integer ?? -1
        }
        return try SQLiteDatabase(path: directory.path + "/keys.sqlite").query("SELECT count(*) FROM \(table)").first?.first?.integer ?? -1
    }
}
