// SPDX-License-Identifier: GPL-3.0-or-later

/// A failed libpq call: the SQLSTATE, the server's (or libpq's) message, and what was being done.
public struct PostgreSQLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE (PostgreSQL's Appendix A). libpq reports none for a failed
    /// connection or a lost one; those carry 08001 and 08006, the standard's codes for them.
    public var sqlState: String
    public var message: String
    public var operation: String

    public init(sqlState: String, message: String, operation: String) {
        self.sqlState = sqlState
        self.message = message
        self.operation = operation
    }

    /// 08001, sqlclient_unable_to_establish_sqlconnection.
    public static let unableToConnect = "08001"
    /// 08006, connection_failure.
    public static let connectionFailure = "08006"

    /// 23505, unique_violation.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// Class 08, connection exception.
    public var isConnection: Bool { sqlState.hasPrefix("08") }

    public var description: String { "\(operation): \(message) (SQLSTATE \(sqlState))" }
}
