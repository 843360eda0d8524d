// SPDX-License-Identifier: GPL-3.0-or-later

/// A failed libpq call: the SQLSTATE, the server's (or libpq's) message, and what was being done.
package struct PostgreSQLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE (PostgreSQL's Appendix A). libpq reports none for a failed
    /// connection or a lost one; those carry 08001 and 08006, the standard's codes for them.
    package var sqlState: String
    package var message: String
    package var operation: String

    package init(sqlState: String, message: String, operation: String) {
        self.sqlState = sqlState
        self.message = message
        self.operation = operation
    }

    /// 08001, sqlclient_unable_to_establish_sqlconnection.
    package static let unableToConnect = "08001"
    /// 08006, connection_failure.
    package static let connectionFailure = "08006"

    /// 23505, unique_violation.
    package var isUniqueViolation: Bool { sqlState == "23505" }
    /// Class 08, connection exception.
    package var isConnection: Bool { sqlState.hasPrefix("08") }

    package var description: String { "\(operation): \(message) (SQLSTATE \(sqlState))" }
}
