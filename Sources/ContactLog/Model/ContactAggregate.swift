// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// Everything the log keeps of one RPI heard during one scan window. One per (window, RPI).
package struct ContactAggregate: Hashable, Sendable {
    package var rpi: RollingProximityIdentifier
    package var aem: AssociatedEncryptedMetadata
    /// Wall-clock time of the first report in the window.
    package var firstSeen: UnixTime
    /// Wall-clock time of the last report in the window (`firstSeen` plus monotonic elapsed time, so
    /// a clock step inside the window cannot make it earlier than `firstSeen`).
    package var lastSeen: UnixTime
    /// Advertising reports of this RPI in the window, valid RSSI or not.
    package var reports: UInt16
    package var rssi: RSSISummary
    /// When the scan before this window ended, for secondsSinceLastScan; `nil` if unknown (the
    /// first scan after start-up).
    package var previousScanEnd: UnixTime?

    package init(
        rpi: RollingProximityIdentifier, aem: AssociatedEncryptedMetadata, firstSeen: UnixTime, lastSeen: UnixTime,
        reports: UInt16, rssi: RSSISummary, previousScanEnd: UnixTime?
    ) {
        self.rpi = rpi
        self.aem = aem
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.reports = reports
        self.rssi = rssi
        self.previousScanEnd = previousScanEnd
    }

    /// The UTC day the aggregate is filed under: the day of its first report.
    package var day: UTCDay { UTCDay(containing: firstSeen) }
}

/// One scan window: when the radio listened, and what it heard. Kept so that coverage and gaps are
/// known, not only the sightings.
package struct ScanWindowRecord: Hashable, Sendable {
    package var start: UnixTime
    package var end: UnixTime
    /// Every advertising report received in the window, GAEN or not.
    package var reports: UInt32
    /// The reports that carried GAEN service data.
    package var exposureNotificationReports: UInt32
    /// Distinct RPIs heard, i.e. aggregates written for the window.
    package var aggregates: UInt32
    /// When the previous window ended; `nil` if unknown.
    package var previousScanEnd: UnixTime?
    /// The window's length measured on the monotonic clock, in milliseconds.
    package var monotonicMilliseconds: UInt32
    /// GAEN reports not kept because the window was over its cap of distinct RPIs
    /// (`ScanWindowAggregator.maximumRPIs`).
    package var droppedReports: UInt32
    /// RPIs turned away or evicted when the window was over its cap (one that came back and was
    /// dropped again counts again).
    package var droppedRPIs: UInt32

    package init(
        start: UnixTime, end: UnixTime, reports: UInt32, exposureNotificationReports: UInt32, aggregates: UInt32,
        previousScanEnd: UnixTime?, monotonicMilliseconds: UInt32, droppedReports: UInt32 = 0, droppedRPIs: UInt32 = 0
    ) {
        self.droppedReports = droppedReports
        self.droppedRPIs = droppedRPIs
        self.start = start
        self.end = end
        self.reports = reports
        self.exposureNotificationReports = exposureNotificationReports
        self.aggregates = aggregates
        self.previousScanEnd = previousScanEnd
        self.monotonicMilliseconds = monotonicMilliseconds
    }

    /// The UTC day the window is filed under: the day it started.
    package var day: UTCDay { UTCDay(containing: start) }
}

/// A record of the log, as read back.
package enum ContactLogRecord: Hashable, Sendable {
    case aggregate(ContactAggregate)
    case scanWindow(ScanWindowRecord)
}
