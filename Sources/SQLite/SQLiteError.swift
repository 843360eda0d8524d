// SPDX-License-Identifier: GPL-3.0-or-later

/// A failed SQLite call: the result code and SQLite's message, and what was being done.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var operation: String

    public init(code: Int32, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    /// SQLITE_CONSTRAINT (a unique key or a check refused the row).
    public var isConstraint: Bool { code & 0xFF == 19 }
    /// SQLITE_BUSY (another connection holds the lock past the busy timeout).
    public var isBusy: Bool { code & 0xFF == 5 }

    public var description: String { "\(operation): \(message) (SQLite \(code))" }
}

/// A value in or out of a statement.
public enum SQLiteValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var text: String? { if case .text(let value) = self { value } else { nil } }
    public var blob: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
    public var real: Double? { if case .real(let value) = self { value } else { nil } }
}
