// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// Parsers for the values tools take, each throwing a `UsageError` that names the argument.
enum ArgumentParsing {
    /// Hex of exactly `count` bytes (any count if `nil`).
    static func hex(_ text: String, count: Int? = nil, argument: String) throws(UsageError) -> [UInt8] {
        do {
            if let count { return try Hex.decode(text, count: count) }
            return try Hex.decode(text)
        } catch {
            throw UsageError(argument, "'\(text)': \(error)")
        }
    }

    /// Sixteen bytes of hex.
    static func bytes16(_ text: String, argument: String) throws(UsageError) -> Bytes16 {
        Bytes16(try hex(text, count: 16, argument: argument))!
    }

    /// An interval number: a decimal uint32. Negative values are named as such, because they are the
    /// likeliest mistake (a relative offset).
    static func interval(_ text: String, argument: String) throws(UsageError) -> ENIntervalNumber {
        let trimmed = text.trimmingWhitespace()
        if trimmed.hasPrefix("-") {
            throw UsageError(argument, "'\(text)' is negative; interval numbers count 10-minute intervals since 1970")
        }
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw UsageError(argument, "'\(text)' is not a decimal interval number")
        }
        guard let value = UInt32(trimmed) else {
            throw UsageError(argument, "'\(text)' is larger than the largest interval number, \(UInt32.max)")
        }
        return ENIntervalNumber(rawValue: value)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
