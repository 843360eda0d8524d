// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// One scan window's reports folded into what the log keeps: one aggregate per RPI (first and last
/// time, report count, RSSI summary after the receiver's correction) and the window's counts. Pure:
/// the scanner feeds it what the radio reports, the replay (`gaenctl tools replay`) what a
/// recording says was heard, so both write the same records from the same sightings.
package struct ScanWindowAggregator: Sendable {
    package let start: UnixTime
    /// The end of the receiver's previous scan window, whatever it heard: each aggregate carries it.
    package let previousScanEnd: UnixTime?
    /// Added to each reading (`rssi-correction`).
    package let rssiCorrection: Int
    package private(set) var reports: UInt32 = 0
    package private(set) var exposureNotificationReports: UInt32 = 0
    package private(set) var malformed = 0
    private var aggregates: [RollingProximityIdentifier: ContactAggregate] = [:]

    package init(start: UnixTime, previousScanEnd: UnixTime?, rssiCorrection: Int) {
        self.start = start
        self.previousScanEnd = previousScanEnd
        self.rssiCorrection = rssiCorrection
    }

    /// A report that is not GAEN (another advertisement, a scan response).
    package mutating func addOther() { reports += 1 }

    /// A frame that claims to be GAEN but is malformed: counted, dropped.
    package mutating func addMalformed() {
        reports += 1
        malformed += 1
    }

    /// A GAEN report of `rpi` at `seen` with the raw `rssi`.
    package mutating func add(rpi: RollingProximityIdentifier, aem: AssociatedEncryptedMetadata, rssi raw: Int8, at seen: UnixTime) {
        reports += 1
        exposureNotificationReports += 1
        let rssi = Self.corrected(raw, by: rssiCorrection)
        if var aggregate = aggregates[rpi] {
            aggregate.lastSeen = seen
            aggregate.reports &+= 1
            aggregate.rssi.add(rssi)
            aggregates[rpi] = aggregate
        } else {
            var summary = RSSISummary()
            summary.add(rssi)
            aggregates[rpi] = ContactAggregate(
                rpi: rpi, aem: aem, firstSeen: seen, lastSeen: seen, reports: 1, rssi: summary, previousScanEnd: previousScanEnd)
        }
    }

    /// The window's record, ending at `end`, and its aggregates in the order they were first heard.
    package func finish(end: UnixTime, monotonicMilliseconds: UInt32) -> (record: ScanWindowRecord, aggregates: [ContactAggregate]) {
        let record = ScanWindowRecord(
            start: start, end: end, reports: reports, exposureNotificationReports: exposureNotificationReports,
            aggregates: UInt32(aggregates.count), previousScanEnd: previousScanEnd, monotonicMilliseconds: monotonicMilliseconds)
        return (record, aggregates.values.sorted { $0.firstSeen < $1.firstSeen })
    }

    /// A reading with the receiver's correction applied, clamped to −127…126 dBm: 127 means "not
    /// available" (and stays so), so a strong corrected reading must never become it.
    package static func corrected(_ rssi: Int8, by correction: Int) -> Int8 {
        guard rssi != RSSISummary.notAvailable else { return rssi }
        return Int8(min(max(Int(rssi) + correction, -127), 126))
    }
}
