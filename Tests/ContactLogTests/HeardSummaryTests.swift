// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Storage
import Testing

/// `HeardSummary`: what `gaenctl heard` shows, counted from the log. Hours with nothing heard are
/// there, the span never reaches past 14 days, RSSI falls in 10 dB buckets, and no identifier
/// leaves.
@Suite struct HeardSummaryTests {
    @Test func countsPerHourDistinctRPIsAndStrength() async throws {
        let fixture = try LogFixture()
        let writer = try fixture.writer()
        let noon = LogFixture.noon
        // 10:05: RPIs 1 and 2; 10:40: RPI 1 again; 11:30: RPI 3, whose only report had no RSSI.
        try await writer.append(
            window: window(at: noon.adding(seconds: -7200 + 300), aggregates: 2),
            aggregates: [
                aggregate(1, at: noon.adding(seconds: -7200 + 300), rssi: [-95, -120]), aggregate(2, at: noon.adding(seconds: -7200 + 300), rssi: [-45]),
            ])
        try await writer.append(
            window: window(at: noon.adding(seconds: -7200 + 2400), aggregates: 1),
            aggregates: [
                aggregate(1, at: noon.adding(seconds: -7200 + 2400), rssi: [-25])
            ])
        try await writer.append(
            window: window(at: noon.adding(seconds: -1800), aggregates: 1),
            aggregates: [
                aggregate(3, at: noon.adding(seconds: -1800), rssi: [RSSISummary.notAvailable])
            ])
        try await writer.sync()

        let summary = try HeardSummary(reader: fixture.reader, since: noon.adding(seconds: -3 * 3600), until: noon)
        #expect(summary.hours.map(\.start) == [9, 10, 11, 12].map { LogFixture.noon.adding(seconds: Int64($0 - 12) * 3600) })
        #expect(summary.hours.map(\.counts.aggregates) == [0, 3, 1, 0])
        #expect(summary.hours.map(\.counts.distinctRPIs) == [0, 2, 1, 0])
        #expect(summary.hours.map(\.counts.scanWindows) == [0, 2, 1, 0])
        #expect(summary.total.aggregates == 4)
        #expect(summary.total.distinctRPIs == 3)
        #expect(summary.total.listeningMilliseconds == 12_000)
        // Each sighting counts once, at its strongest valid reading: -95, -45, -25; one had none.
        #expect(summary.rssi.count == 9)
        #expect(summary.rssi.first == HeardSummary.RSSIBucket(lowest: nil, highest: -101, sightings: 0))
        #expect(summary.rssi[1] == HeardSummary.RSSIBucket(lowest: -100, highest: -91, sightings: 1))
        #expect(summary.rssi[6] == HeardSummary.RSSIBucket(lowest: -50, highest: -41, sightings: 1))
        #expect(summary.rssi.last == HeardSummary.RSSIBucket(lowest: -30, highest: nil, sightings: 1))
        #expect(summary.rssiUnknown == 1)

        // A span that starts at 11:00 leaves the 10:xx sightings out.
        let later = try HeardSummary(reader: fixture.reader, since: noon.adding(seconds: -3600), until: noon)
        #expect(later.total.aggregates == 1)
        #expect(later.hours.count == 2)

        // The JSON has counts and bounds, nothing that identifies anyone.
        let json = summary.json.serialized()
        #expect(json.contains(#""distinct_rpis":3"#))
        let someRPI = SyntheticContacts.rpi(seed: 7, number: 1).bytes.hex
        #expect(!json.lowercased().contains(someRPI.lowercased()))
    }

    @Test func theSpanStopsAtFourteenDays() throws {
        let fixture = try LogFixture()
        let summary = try HeardSummary(reader: fixture.reader, since: UnixTime(seconds: 0), until: LogFixture.noon)
        #expect(summary.since == LogFixture.noon.adding(seconds: -14 * 86_400))
        #expect(summary.hours.count == 14 * 24 + 1)
        #expect(summary.total == HeardSummary.Counts())
        // A start after the end is the end.
        let backwards = try HeardSummary(reader: fixture.reader, since: LogFixture.noon.adding(seconds: 600), until: LogFixture.noon)
        #expect(backwards.hours.count == 1)
    }

    @Test func bucketsAreTenDecibelsWide() {
        #expect(HeardSummary.bucket(of: -127) == 0)
        #expect(HeardSummary.bucket(of: -101) == 0)
        #expect(HeardSummary.bucket(of: -100) == 1)
        #expect(HeardSummary.bucket(of: -91) == 1)
        #expect(HeardSummary.bucket(of: -90) == 2)
        #expect(HeardSummary.bucket(of: -31) == 7)
        #expect(HeardSummary.bucket(of: -30) == 8)
        #expect(HeardSummary.bucket(of: 20) == 8)
    }
}
