// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// Deterministic synthetic sightings for tests, benchmarks and crash tests: the same seed gives the
/// same windows and aggregates, so a test can regenerate exactly what a killed writer was writing.
package struct SyntheticContacts: Sendable {
    package var seed: UInt64
    /// Distinct RPIs to draw from; each window's aggregates have distinct RPIs.
    package var distinctRPIs: Int
    package var aggregatesPerWindow: Int
    /// The windows are spread evenly over this many UTC days ending with `lastDay`.
    package var days: Int
    package var lastDay: UTCDay
    package var totalAggregates: Int

    package init(seed: UInt64, distinctRPIs: Int, aggregatesPerWindow: Int, days: Int, lastDay: UTCDay, totalAggregates: Int) {
        precondition(distinctRPIs >= aggregatesPerWindow && aggregatesPerWindow > 0 && days > 0)
        self.seed = seed
        self.distinctRPIs = distinctRPIs
        self.aggregatesPerWindow = aggregatesPerWindow
        self.days = days
        self.lastDay = lastDay
        self.totalAggregates = totalAggregates
    }

    package var windowCount: Int { (totalAggregates + aggregatesPerWindow - 1) / aggregatesPerWindow }

    /// The `index`-th window and its aggregates.
    package func window(_ index: Int) -> (window: ScanWindowRecord, aggregates: [ContactAggregate]) {
        let count = min(aggregatesPerWindow, totalAggregates - index * aggregatesPerWindow)
        // Windows spread over the days: start times step evenly through [first day, last day + 1).
        let span = Int64(days) * 86_400_000
        let firstDay = lastDay.advanced(by: -Int64(days - 1))
        let offset = Int64(index) * span / Int64(max(1, windowCount))
        let start = UnixTime(milliseconds: firstDay.start.milliseconds + offset)
        let end = start.adding(seconds: 4)
        let previousEnd: UnixTime? = index == 0 ? nil : start.adding(seconds: -240)
        var generator = SplitMix64(seed: seed ^ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        let base = Int(generator.next() % UInt64(distinctRPIs))
        var aggregates = [ContactAggregate]()
        aggregates.reserveCapacity(count)
        for item in 0..<count {
            let rpiNumber = (base + item) % distinctRPIs
            let first = start.adding(seconds: 0).milliseconds + Int64(generator.next() % 2000)
            let reports = UInt16(1 + generator.next() % 12)
            var rssi = RSSISummary()
            for _ in 0..<reports {
                // One report in 50 without an RSSI, as controllers send now and then.
                rssi.add(generator.next() % 50 == 0 ? RSSISummary.notAvailable : Int8(-40 - Int(generator.next() % 60)))
            }
            aggregates.append(
                ContactAggregate(
                    rpi: Self.rpi(seed: seed, number: rpiNumber), aem: AssociatedEncryptedMetadata((1, 2, 3, UInt8(truncatingIfNeeded: rpiNumber))),
                    firstSeen: UnixTime(milliseconds: first),
                    lastSeen: UnixTime(milliseconds: first + Int64(generator.next() % 2000)), reports: reports,
                    rssi: rssi, previousScanEnd: previousEnd))
        }
        let window = ScanWindowRecord(
            start: start, end: end, reports: UInt32(count * 3), exposureNotificationReports: UInt32(count * 2),
            aggregates: UInt32(count), previousScanEnd: previousEnd, monotonicMilliseconds: 4000)
        return (window, aggregates)
    }

    /// The RPI with a number: random-looking, fixed by the seed.
    package static func rpi(seed: UInt64, number: Int) -> RollingProximityIdentifier {
        var generator = SplitMix64(seed: seed &+ UInt64(number) &* 0xD6E8_FEB8_6659_FD93)
        return RollingProximityIdentifier(Bytes16(words: (generator.next(), generator.next())))
    }
}
