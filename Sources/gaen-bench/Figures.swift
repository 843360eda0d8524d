// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// How benchmarks print their figures, in one place so every benchmark reads the same.
enum Figures {
    /// `text` padded with spaces to `width`, for a table's column.
    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// A count or rate with thousands separators: 1,234,567.
    static func grouped(_ value: Double) -> String {
        var digits = String(Int(value.rounded()))
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }

    /// A value with a fixed number of decimals.
    static func decimals(_ value: Double, _ places: Int) -> String {
        String(format: "%.\(places)f", value)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
