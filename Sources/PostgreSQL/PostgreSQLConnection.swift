// SPDX-License-Identifier: GPL-3.0-or-later

internal import CPostgreSQL
import Glibc

/// One connection to a PostgreSQL server through libpq, owned by whoever made it (an actor, in
/// practice): not Sendable, since libpq allows one thread at a time on a connection. Statements
/// run with binary parameters and binary results (`PQexecParams`), so no value is ever quoted
/// into SQL text. Calls block the calling thread until the server answers.
package final class PostgreSQLConnection {
    private let connection: OpaquePointer

    /// Connects with a libpq connection string: a URI (`postgresql://user@host:5432/db`) or
    /// keywords (`host=... dbname=...`). A connection string without `connect_timeout` gets 10 s,
    /// so an unreachable server is an error rather than a hang.
    /// - Throws: `PostgreSQLError` with SQLSTATE 08001 and libpq's message, any password in it
    ///   replaced by `***`.
    /// `serverOptions` are libpq's `options` (`-c name=value`...): session settings that a
    /// reconnection keeps, since libpq connects again with the same parameters.
    package init(_ connectionString: String, serverOptions: String? = nil) throws(PostgreSQLError) {
        // PQconnectdbParams with expand_dbname: `dbname` is expanded as a whole connection string,
        // and it comes last so that its own connect_timeout, if any, wins over ours.
        let keywords = ["connect_timeout"] + (serverOptions == nil ? [] : ["options"]) + ["dbname"]
        let values = ["10"] + (serverOptions.map { [$0] } ?? []) + [connectionString]
        let opened = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let opened else {
            throw PostgreSQLError(sqlState: PostgreSQLError.unableToConnect, message: "out of memory", operation: "connecting to PostgreSQL")
        }
        guard PQstatus(opened) == CONNECTION_OK else {
            let message = ConnectionString.redacting(Self.trimmed(PQerrorMessage(opened)), of: connectionString)
            PQfinish(opened)
            throw PostgreSQLError(sqlState: PostgreSQLError.unableToConnect, message: message, operation: "connecting to PostgreSQL")
        }
        connection = opened
        try configureSession()
    }

    /// CREATE ... IF NOT EXISTS reports a NOTICE when the object exists, and libpq's default
    /// notice processor prints every notice to stderr: keep only warnings and worse.
    private func configureSession() throws(PostgreSQLError) {
        try execute("SET client_min_messages = warning")
    }

    deinit { PQfinish(connection) }

    /// Runs one or more statements without parameters or results (schema, settings).
    package func execute(_ sql: String) throws(PostgreSQLError) {
        try reconnectIfLost()
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        _ = try checked(result, operation: String(sql.prefix(60)))
    }

    /// Runs one statement with `parameters` (`$1`, `$2`...) and returns every row.
    @discardableResult
    package func query(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(PostgreSQLError) -> [[PostgreSQLValue]] {
        try reconnectIfLost()
        let encoded = parameters.map(\.binaryParameter)
        let types = encoded.map(\.type)
        let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: encoded.count)
        // All values in one buffer, so every pointer stays valid for the call. The trailing byte
        // keeps it non-empty: an empty text or bytea still needs a non-NULL pointer (NULL is SQL NULL).
        var storage = [UInt8]()
        var offsets = [Int?]()
        for parameter in encoded {
            offsets.append(
                parameter.bytes.map { bytes in
                    defer { storage += bytes }
                    return storage.count
                })
        }
        storage.append(0)
        let result = storage.withUnsafeBytes { buffer in
            let values = offsets.map { offset in offset.map { (buffer.baseAddress! + $0).assumingMemoryBound(to: CChar.self) } }
            return PQexecParams(connection, sql, Int32(encoded.count), types, values, lengths, formats, 1)
        }
        defer { PQclear(result) }
        let operation = String(sql.prefix(60))
        return try rows(of: try checked(result, operation: operation), operation: operation)
    }

    /// Runs `body` between BEGIN and COMMIT; rolled back if it throws, so nothing is half stored.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            // A statement that failed inside `body` and was caught there has aborted the
            // transaction, and COMMIT would then roll it back without an error.
            guard PQtransactionStatus(connection) != PQTRANS_INERROR else {
                throw PostgreSQLError(sqlState: "25P02", message: "a statement in the transaction failed, so nothing was stored", operation: "COMMIT")
            }
            try execute("COMMIT")
            return value
        } catch {
            // A lost connection (PQTRANS_UNKNOWN) needs no ROLLBACK: the server rolls back.
            let state = PQtransactionStatus(connection)
            if state == PQTRANS_INTRANS || state == PQTRANS_INERROR { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// A connection the server dropped (a restart, a failover) is opened again before the next
    /// statement, so a long-running server recovers; the statement that saw it fail has thrown.
    private func reconnectIfLost() throws(PostgreSQLError) {
        guard PQstatus(connection) == CONNECTION_BAD else { return }
        PQreset(connection)
        guard PQstatus(connection) == CONNECTION_OK else {
            throw PostgreSQLError(sqlState: PostgreSQLError.connectionFailure, message: Self.trimmed(PQerrorMessage(connection)), operation: "reconnecting")
        }
        try configureSession()
    }

    /// The result if it is a success; otherwise its error, thrown.
    private func checked(_ result: OpaquePointer?, operation: String) throws(PostgreSQLError) -> OpaquePointer {
        guard let result else {
            // No result at all: libpq ran out of memory or lost the connection before any reply.
            throw PostgreSQLError(sqlState: PostgreSQLError.connectionFailure, message: Self.trimmed(PQerrorMessage(connection)), operation: operation)
        }
        let status = PQresultStatus(result)
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK, status != PGRES_EMPTY_QUERY else { return result }
        let state = PQresultErrorField(result, cgaend_pg_diag_sqlstate).map { String(cString: $0) }
        // The primary message only: DETAIL quotes row values (a duplicate key's bytes, a code),
        // which must not reach a log.
        let message = PQresultErrorField(result, cgaend_pg_diag_message_primary).map { String(cString: $0) } ?? Self.trimmed(PQresultErrorMessage(result))
        // Every server error has a SQLSTATE; one made by libpq itself may not (XX000: internal_error).
        throw PostgreSQLError(
            sqlState: state ?? (PQstatus(connection) == CONNECTION_BAD ? PostgreSQLError.connectionFailure : "XX000"), message: message,
            operation: operation)
    }

    /// The result's rows, decoded by column type.
    private func rows(of result: OpaquePointer, operation: String) throws(PostgreSQLError) -> [[PostgreSQLValue]] {
        let columns = PQnfields(result)
        let types = (0..<columns).map { PQftype(result, $0) }
        var rows = [[PostgreSQLValue]]()
        rows.reserveCapacity(Int(PQntuples(result)))
        for row in 0..<PQntuples(result) {
            var values = [PostgreSQLValue]()
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                if PQgetisnull(result, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: Int(PQgetlength(result, row, column)))
                guard let value = PostgreSQLValue(binary: bytes, type: types[Int(column)]) else {
                    let name = String(cString: PQfname(result, column))
                    // 42804, datatype_mismatch: the standard's nearest code for a type not read here.
                    throw PostgreSQLError(
                        sqlState: "42804",
                        message: "column \(name) has type OID \(types[Int(column)]), which is not decoded here: cast it to bigint, text or bytea",
                        operation: operation)
                }
                values.append(value)
            }
            rows.append(values)
        }
        return rows
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "no message" }
        var text = String(cString: message)
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }

    /// Calls `body` with `strings` as a NULL-terminated array of C strings (what
    /// PQconnectdbParams takes), valid for the call.
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }
}
