// SPDX-License-Identifier: GPL-3.0-or-later

/// The received signal strength of one RPI over one scan window: its maximum and the sum of the
/// valid readings, so the mean can be had without keeping every report.
///
/// A controller reports RSSI 127 when it has no reading ("not available", Core Spec Vol 4 Part E
/// §7.7.65.2). Such reports count as reports but never as a number: `maximum` stays `nil` and the
/// mean excludes them.
package struct RSSISummary: Hashable, Sendable {
    /// The value a controller reports when it has no RSSI.
    package static let notAvailable: Int8 = 127

    /// The strongest valid reading, dBm; `nil` if every report was 127.
    package var maximum: Int8?
    /// The sum of the valid readings, dBm.
    package var sum: Int32
    /// How many readings were valid.
    package var validReports: UInt16

    package init(maximum: Int8? = nil, sum: Int32 = 0, validReports: UInt16 = 0) {
        self.maximum = maximum
        self.sum = sum
        self.validReports = validReports
    }

    /// The mean of the valid readings, `nil` if there were none.
    package var mean: Double? { validReports == 0 ? nil : Double(sum) / Double(validReports) }

    /// Adds one reading; 127 is counted nowhere here.
    package mutating func add(_ rssi: Int8) {
        guard rssi != Self.notAvailable, validReports < UInt16.max else { return }
        maximum = Swift.max(maximum ?? rssi, rssi)
        sum += Int32(rssi)
        validReports += 1
    }
}
