// SPDX-License-Identifier: GPL-3.0-or-later

/// A failed SQLite call: the result code and SQLite's message, and what was being done.
package struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    package var code: Int32
    package var message: String
    package var operation: String

    package init(code: Int32, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    /// SQLITE_CONSTRAINT (a unique key or a check refused the row).
    package var isConstraint: Bool { code & 0xFF == 19 }
    /// SQLITE_BUSY (another connection holds the lock past the busy timeout).
    package var isBusy: Bool { code & 0xFF == 5 }

    package var description: String { "\(operation): \(message) (SQLite \(code))" }
}

/// A value in or out of a statement.
package enum SQLiteValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    package var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    package var text: String? { if case .text(let value) = self { value } else { nil } }
    package var blob: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
    package var real: Double? { if case .real(let value) = self { value } else { nil } }
}
