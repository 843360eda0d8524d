// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Storage
import Testing

@Suite(.ownThreads) struct IndexTests {
    @Test func theIndexFindsEveryLoggedRPIWithAllItsAggregates() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        // Three days, 40 windows a day, 25 aggregates each, drawn from 300 RPIs: RPIs repeat.
        let synthetic = SyntheticContacts(
            seed: 11, distinctRPIs: 300, aggregatesPerWindow: 25, days: 3, lastDay: LogFixture.day, totalAggregates: 3000)
        var expected: [RollingProximityIdentifier: [ContactAggregate]] = [:]
        for index in 0..<synthetic.windowCount {
            let (scan, aggregates) = synthetic.window(index)
            log.clock.set(scan.start)
            try await writer.append(window: scan, aggregates: aggregates)
            for aggregate in aggregates { expected[aggregate.rpi, default: []].append(aggregate) }
        }
        let index = try MatchingIndex(reader: log.reader)
        #expect(index.aggregateCount == 3000)
        #expect(index.distinctRPIs == expected.count)
        #expect(index.days == [LogFixture.day.advanced(by: -2), LogFixture.day.advanced(by: -1), LogFixture.day])
        for (rpi, aggregates) in expected {
            #expect(index.contains(rpi))
            // Newest first, exactly the aggregates written, with their days restored.
            #expect(index.aggregates(of: rpi) == aggregates.reversed())
        }
        for number in 300..<2300 {
            let stranger = SyntheticContacts.rpi(seed: 11, number: number)
            #expect(!index.contains(stranger))
            #expect(index.aggregates(of: stranger).isEmpty)
        }
        // No more than the records themselves plus the table and the filter (2,048 words).
        #expect(index.memoryBytes <= 3120 * 48 + 8192 * 8 + 2048 * 8)
        // The filter never says no to a logged RPI, and says yes to few others.
        #expect(expected.keys.allSatisfy { index.mayContain($0) })
        let falsePositives = (300..<100_300).count { index.mayContain(SyntheticContacts.rpi(seed: 11, number: $0)) }
        #expect(falsePositives < 1000, "\(falsePositives) of 100,000")
    }

    @Test func aDayRangeLimitsTheIndex() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let yesterday = LogFixture.noon.adding(seconds: -86_400)
        log.clock.set(yesterday)
        try await writer.append(window: window(at: yesterday, aggregates: 1), aggregates: [aggregate(1, at: yesterday)])
        log.clock.set(LogFixture.noon)
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [aggregate(2, at: LogFixture.noon)])
        let index = try MatchingIndex(reader: log.reader, days: LogFixture.day...LogFixture.day)
        #expect(index.aggregateCount == 1)
        #expect(index.contains(aggregate(2, at: LogFixture.noon).rpi))
        #expect(!index.contains(aggregate(1, at: yesterday).rpi))
    }

    @Test func chosenRPIsCannotCrowdOneSlot() async throws {
        // RPIs that agree in every bit but a few of the second word: with an unkeyed hash of the
        // first word they would all probe the same slot chain.
        let log = try LogFixture()
        let writer = try log.writer()
        var crafted = [ContactAggregate]()
        for number in 0..<2000 {
            var value = aggregate(number, at: LogFixture.noon)
            value.rpi = RollingProximityIdentifier(Bytes16(words: (0x4141_4141_4141_4141, UInt64(number))))
            crafted.append(value)
        }
        try await writer.append(window: window(at: LogFixture.noon, aggregates: crafted.count), aggregates: crafted)
        let index = try MatchingIndex(reader: log.reader)
        #expect(index.distinctRPIs == 2000)
        #expect(crafted.allSatisfy { index.contains($0.rpi) })
    }

    @Test func statisticsCountPerDayAndHourWithoutIdentifiers() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let noon = LogFixture.noon
        try await writer.append(window: window(at: noon, aggregates: 2), aggregates: [aggregate(1, at: noon), aggregate(2, at: noon)])
        try await writer.append(
            window: window(at: noon.adding(seconds: 240), aggregates: 1), aggregates: [aggregate(1, at: noon.adding(seconds: 240), rssi: [-50, -51, -52])])
        try await writer.append(
            window: window(at: noon.adding(seconds: 3600), aggregates: 1), aggregates: [aggregate(3, at: noon.adding(seconds: 3600))])
        let statistics = try ContactLogStatistics(reader: log.reader)
        let day = try #require(statistics.days[LogFixture.day])
        #expect(day.aggregates == 4)
        #expect(day.distinctRPIs == 3)
        #expect(day.scanWindows == 3)
        #expect(day.reports == 9)
        #expect(day.scanReports == 20)
        #expect(day.listeningMilliseconds == 12_000)
        let firstHour = try #require(statistics.hours[noon])
        #expect(firstHour.aggregates == 3)
        #expect(firstHour.distinctRPIs == 2)
        #expect(firstHour.scanWindows == 2)
        #expect(statistics.hours[noon.adding(seconds: 3600)]?.distinctRPIs == 1)
    }

    @Test func theDurabilityPolicyDecidesWhatIsSynced() async throws {
        let log = try LogFixture()
        let writer = try log.writer(policy: .everyWindows(3))
        for index in 0..<4 {
            let time = LogFixture.noon.adding(seconds: Int64(index) * 240)
            try await writer.append(window: window(at: time, aggregates: 1), aggregates: [aggregate(index, at: time)])
            #expect(await writer.syncedAggregates == (index >= 2 ? 3 : 0))
        }
        try await writer.sync()
        #expect(await writer.syncedAggregates == 4)
    }
}
