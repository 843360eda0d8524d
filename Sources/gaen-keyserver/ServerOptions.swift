// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCrypto
import Foundation
import KeyServer

/// Options naming where the server keeps its tables: SQLite files in the data directory, or one
/// PostgreSQL database that several replicas share.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server's data directory: its SQLite databases (without --database) and, for serve, its exports.", completion: .directory)
    var dataDir: String?

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL database for the keys and the verification tables, as a URL (postgresql://user@host:5432/db).",
            discussion: "Without it, SQLite files in --data-dir. Keep the password in ~/.pgpass or PGPASSWORD rather than in the URL.",
            valueName: "url"))
    var database: String?

    func validate() throws {
        if let database {
            // Not echoed: a URL that is not one may still hold a password.
            guard database.hasPrefix("postgresql://") || database.hasPrefix("postgres://") else {
                throw ValidationError("--database: expected a postgresql:// or postgres:// URL")
            }
        } else if dataDir == nil {
            throw ValidationError("--data-dir: needed unless --database names a PostgreSQL database")
        }
    }

    /// Where a store's tables are: the PostgreSQL database, or `file` in the data directory.
    func location(sqliteFile file: String) throws -> DatabaseLocation {
        if let database { return .postgreSQL(connectionString: database) }
        guard let dataDir else { throw ValidationError("--data-dir: needed unless --database names a PostgreSQL database") }
        // Everything the server creates from here on (databases, exports) is its own alone.
        umask(0o077)
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        // The data directory and the databases are the server's alone (verification codes and
        // tokens are in them), also when an older version left them readable.
        _ = chmod(dataDir, 0o700)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: dataDir + "/" + file + suffix) {
            _ = chmod(dataDir + "/" + file + suffix, 0o600)
        }
        return .sqlite(path: dataDir + "/" + file)
    }

    func openKeyStore() throws -> KeyStore {
        let location = try location(sqliteFile: "keys.sqlite")
        do {
            return try KeyStore(location)
        } catch {
            throw DatabaseOpenError(location: location, error: error)
        }
    }

    /// The verifier, its codes stored under the key `codeKey` finds (after the data directory is
    /// made, where that key may be created).
    func openVerifier(signingKey: ECDSAPrivateKey, codeKey: CodeHMACKeyOptions) throws -> Verifier {
        let location = try location(sqliteFile: "verification.sqlite")
        let key = try codeKey.key(self)
        do {
            return try Verifier(location, signingKey: signingKey, codeKey: key)
        } catch {
            throw DatabaseOpenError(location: location, error: error)
        }
    }
}

/// A database that could not be opened, named by the option that chose it. The connection string
/// is never printed (it may hold a password); libpq's message names the host and port.
struct DatabaseOpenError: Error, CustomStringConvertible {
    var location: DatabaseLocation
    var error: DatabaseError

    var description: String {
        switch location {
        case .sqlite(let path): "--data-dir: cannot open \(path): \(error.message) (\(error.operation))"
        case .postgreSQL: "--database: cannot use the PostgreSQL database: \(error.message) (\(error.operation))"
        }
    }
}
