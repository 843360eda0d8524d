// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// Counts of what the log holds, per UTC day and per UTC hour. No identifiers: this is what an
/// owner or an administrator may look at without learning whom the device met.
package struct ContactLogStatistics: Sendable {
    package struct Counts: Hashable, Sendable {
        /// (window, RPI) aggregates.
        package var aggregates = 0
        /// Distinct RPIs: exact up to 1,024, estimated past that (`DistinctRPIs`).
        package var distinctRPIs = 0
        package var scanWindows = 0
        /// GAEN advertising reports, summed over the aggregates.
        package var reports = 0
        /// Every advertising report the scan windows saw, GAEN or not.
        package var scanReports = 0
        /// Time spent listening, summed over the scan windows (monotonic clock), milliseconds.
        package var listeningMilliseconds: Int64 = 0
        /// GAEN reports not kept, and RPIs turned away, because a window was over its cap.
        package var droppedReports = 0
        package var droppedRPIs = 0

        package init() {}

        mutating func add(_ aggregate: ContactAggregate) {
            aggregates += 1
            reports += Int(aggregate.reports)
        }

        mutating func add(_ window: ScanWindowRecord) {
            scanWindows += 1
            scanReports += Int(window.reports)
            listeningMilliseconds += Int64(window.monotonicMilliseconds)
            droppedReports += Int(window.droppedReports)
            droppedRPIs += Int(window.droppedRPIs)
        }
    }

    package var days: [UTCDay: Counts] = [:]
    /// Keyed by the hour's start.
    package var hours: [UnixTime: Counts] = [:]
    /// The segments read, with their health.
    package var segments: [SegmentReport] = []

    /// Counts the days in `range` (all if `nil`).
    package init(reader: ContactLogReader, days range: ClosedRange<UTCDay>? = nil) throws(ContactLogError) {
        // Distinct RPIs in bounded memory (exact up to 1,024 a span, estimated past it).
        let seed = Int.random(in: .min ... .max)
        var dayRPIs: [UTCDay: DistinctRPIs] = [:]
        var hourRPIs: [UnixTime: DistinctRPIs] = [:]
        segments = try reader.forEachRecord(in: range) { record in
            switch record {
            case .aggregate(let aggregate):
                let day = aggregate.day
                let hour = Self.hour(of: aggregate.firstSeen)
                days[day, default: Counts()].add(aggregate)
                hours[hour, default: Counts()].add(aggregate)
                dayRPIs[day, default: DistinctRPIs(seed: seed)].insert(aggregate.rpi.bytes)
                hourRPIs[hour, default: DistinctRPIs(seed: seed)].insert(aggregate.rpi.bytes)
            case .scanWindow(let window):
                days[window.day, default: Counts()].add(window)
                hours[Self.hour(of: window.start), default: Counts()].add(window)
            }
        }
        for (day, rpis) in dayRPIs { days[day]?.distinctRPIs = rpis.count }
        for (hour, rpis) in hourRPIs { hours[hour]?.distinctRPIs = rpis.count }
    }

    static func hour(of time: UnixTime) -> UnixTime {
        let seconds = time.seconds
        return UnixTime(seconds: seconds - ((seconds % 3600) + 3600) % 3600)
    }
}
