// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Testing

/// What one scan window keeps when a crowd or a flood puts more distinct RPIs in it than its cap:
/// the strongest, every drop counted, and the counts written with the window.
@Suite struct WindowCapTests {
    let start = UnixTime(seconds: 1_700_000_000)

    func rpi(_ number: Int) -> RollingProximityIdentifier { SyntheticContacts.rpi(seed: 5, number: number) }

    func aggregator(capacity: Int = ScanWindowAggregator.maximumRPIs) -> ScanWindowAggregator {
        ScanWindowAggregator(start: start, previousScanEnd: nil, rssiCorrection: 0, capacity: capacity)
    }

    @Test func aWindowUnderItsCapKeepsEverythingAndDropsNothing() {
        var window = aggregator(capacity: 20)
        for number in 0..<20 {
            for _ in 0..<3 { window.add(rpi: rpi(number), aem: AssociatedEncryptedMetadata((0, 0, 0, 0)), rssi: -90, at: start) }
        }
        let (record, aggregates) = window.finish(end: start.adding(seconds: 4), monotonicMilliseconds: 4000)
        #expect(aggregates.count == 20)
        #expect(record.droppedRPIs == 0 && record.droppedReports == 0)
    }

    @Test func overItsCapTheWeakestGoAndEveryDropIsCounted() {
        var window = aggregator(capacity: 3)
        let aem = AssociatedEncryptedMetadata((0, 0, 0, 0))
        // A near phone heard twice, then a flood of far single reports and one nearer newcomer.
        window.add(rpi: rpi(0), aem: aem, rssi: -60, at: start)
        window.add(rpi: rpi(0), aem: aem, rssi: -58, at: start.adding(seconds: 1))
        window.add(rpi: rpi(1), aem: aem, rssi: -90, at: start)
        window.add(rpi: rpi(2), aem: aem, rssi: -95, at: start)
        // Full. Weaker than every kept one: turned away.
        window.add(rpi: rpi(3), aem: aem, rssi: -99, at: start)
        // Stronger than the weakest (-95): takes its place.
        window.add(rpi: rpi(4), aem: aem, rssi: -70, at: start)
        // A report without RSSI is weaker than any reading: turned away.
        window.add(rpi: rpi(5), aem: aem, rssi: RSSISummary.notAvailable, at: start)
        // The far one grows stronger and outranks the next newcomer.
        window.add(rpi: rpi(1), aem: aem, rssi: -65, at: start)
        window.add(rpi: rpi(6), aem: aem, rssi: -68, at: start)
        let (record, aggregates) = window.finish(end: start.adding(seconds: 4), monotonicMilliseconds: 4000)
        #expect(Set(aggregates.map(\.rpi)) == [rpi(0), rpi(1), rpi(6)])
        #expect(aggregates.first { $0.rpi == rpi(0) }?.reports == 2)
        // Turned away: 3, 5; evicted: 2 (by 4), then 4 (by 6).
        #expect(record.droppedRPIs == 4)
        #expect(record.droppedReports == 4)
        #expect(record.aggregates == 3)
        #expect(record.exposureNotificationReports == 9)
    }

    @Test func aFloodOfRPIsKeepsTheStrongestCap() {
        var window = aggregator()
        let aem = AssociatedEncryptedMetadata((0, 0, 0, 0))
        var generator = SplitMix64(seed: 9)
        // A real contact heard through the flood at -50 dBm, every 200th report: 1,000 reports.
        for number in 0..<200_000 {
            window.add(rpi: rpi(number + 1), aem: aem, rssi: Int8(-100 + Int(generator.next() % 30)), at: start)
            if number % 200 == 0 { window.add(rpi: rpi(0), aem: aem, rssi: -50, at: start) }
        }
        let (record, aggregates) = window.finish(end: start.adding(seconds: 4), monotonicMilliseconds: 4000)
        #expect(aggregates.count == ScanWindowAggregator.maximumRPIs)
        #expect(record.aggregates == UInt32(ScanWindowAggregator.maximumRPIs))
        #expect(aggregates.first { $0.rpi == rpi(0) }?.reports == 1000)
        #expect(Int(record.droppedRPIs) == 200_001 - ScanWindowAggregator.maximumRPIs)
        let keptReports = aggregates.reduce(0) { $0 + Int($1.reports) }
        #expect(Int(record.droppedReports) + keptReports == Int(record.exposureNotificationReports))
        // The kept flood RPIs are the strongest: 1/30 of the flood is at -71 dBm, about 6,700
        // RPIs, more than the cap, so every one kept is at -71 (and the real contact at -50).
        #expect(aggregates.allSatisfy { ($0.rssi.maximum ?? -128) >= -71 })
    }

    @Test func theDropCountsAreWrittenWithTheWindow() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        var window = aggregator(capacity: 2)
        let aem = AssociatedEncryptedMetadata((0, 0, 0, 0))
        let noon = LogFixture.noon
        window = ScanWindowAggregator(start: noon, previousScanEnd: nil, rssiCorrection: 0, capacity: 2)
        for number in 0..<10 { window.add(rpi: rpi(number), aem: aem, rssi: Int8(-90 + number), at: noon) }
        let (record, aggregates) = window.finish(end: noon.adding(seconds: 4), monotonicMilliseconds: 4000)
        _ = try await writer.append(window: record, aggregates: aggregates)
        try await writer.sync()
        var read = [ScanWindowRecord]()
        try log.reader.forEachRecord { if case .scanWindow(let window) = $0 { read.append(window) } }
        #expect(read == [record])
        #expect(read.first?.droppedRPIs == 8)
        let statistics = try ContactLogStatistics(reader: log.reader)
        #expect(statistics.days[LogFixture.day]?.droppedRPIs == 8)
        #expect(statistics.days[LogFixture.day]?.droppedReports == 8)
    }
}
