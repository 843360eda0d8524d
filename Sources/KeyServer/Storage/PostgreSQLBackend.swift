// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL

/// `Database` over one libpq connection (the PostgreSQL module). Transactions run at PostgreSQL's
/// default isolation, READ COMMITTED: statements that must not act on a row another replica
/// changed meanwhile say so in their WHERE clause (`... AND claimed IS NULL RETURNING ...`),
/// which PostgreSQL re-checks after waiting for that replica's transaction.
final class PostgreSQLBackend: Database {
    let connection: PostgreSQLConnection
    var engine: DatabaseEngine { .postgreSQL }
    /// How many times a transaction that lost a race (deadlock, serialization failure) is run.
    static let attempts = 3

    init(connectionString: String, serverOptions: String? = nil) throws(DatabaseError) {
        connection = try DatabaseError.fromPostgreSQL { () throws(PostgreSQLError) in
            try PostgreSQLConnection(connectionString, serverOptions: serverOptions)
        }
    }

    func execute(_ sql: String) throws(DatabaseError) {
        try DatabaseError.fromPostgreSQL { () throws(PostgreSQLError) in try connection.execute(sql) }
    }

    @discardableResult
    func query(_ sql: String, _ parameters: [DatabaseValue]) throws(DatabaseError) -> [[DatabaseValue]] {
        try DatabaseError.fromPostgreSQL { () throws(PostgreSQLError) in
            try connection.query(Self.dollarPlaceholders(sql), parameters)
        }
    }

    func transaction<T>(_ body: () throws -> T) throws -> T {
        var attempt = 1
        while true {
            do {
                return try connection.transaction(body)
            } catch {
                // BEGIN and COMMIT throw the module's error; the body's statements already threw ours.
                let failure: any Error = (error as? PostgreSQLError).map { DatabaseError($0) } ?? error
                guard let database = failure as? DatabaseError, database.isTransient, attempt < Self.attempts else { throw failure }
                attempt += 1
            }
        }
    }

    /// A transaction-scoped advisory lock: released by COMMIT or ROLLBACK, so a replica that
    /// dies holding it frees it with its connection.
    func lock(_ lock: DatabaseLock, wait: Bool) throws(DatabaseError) -> Bool {
        let sql =
            wait
            ? "SELECT 1 FROM pg_advisory_xact_lock(?1)"
            : "SELECT pg_try_advisory_xact_lock(?1)::int"
        return try query(sql, [.integer(lock.rawValue)]).first?.first == .integer(1)
    }
}
