// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Storage

/// What the beacon heard over a span of time, for its owner (`gaenctl heard`, Manager1
/// `GetHeard`): sightings, distinct RPIs and listening time per UTC hour, and how strong the
/// sightings were. Counts only: no RPI, no metadata, no address, so it may go to any member of the
/// gaend group without the data directory.
package struct HeardSummary: Sendable, Equatable {
    /// The longest span asked for: the log keeps 14 days.
    package static let longestSpan: Int64 = 14 * 86_400
    /// The RSSI histogram's buckets are this wide (dB); the first is open below, the last above.
    package static let rssiBucketWidth = 10
    /// The first bucket is everything below this (dBm); the last everything from `rssiTop` up.
    package static let rssiBottom = -100
    package static let rssiTop = -30

    /// The log's own counts (`ContactLogStatistics`): a sighting is an aggregate, one RPI heard
    /// in one scan window.
    package typealias Counts = ContactLogStatistics.Counts

    package struct Hour: Sendable, Equatable {
        package var start: UnixTime
        package var counts: Counts
    }

    /// One histogram bucket: sightings whose strongest reading was from `lowest` to `highest` dBm
    /// (either open when `nil`).
    package struct RSSIBucket: Sendable, Equatable {
        package var lowest: Int?
        package var highest: Int?
        package var sightings: Int

        package init(lowest: Int?, highest: Int?, sightings: Int) {
            self.lowest = lowest
            self.highest = highest
            self.sightings = sightings
        }
    }

    package var since: UnixTime
    package var until: UnixTime
    package var total = Counts()
    /// Every hour from `since`'s to `until`'s, those with nothing heard included, oldest first.
    package var hours: [Hour]
    package var rssi: [RSSIBucket]
    /// Sightings without a valid RSSI (every report said 127, "not available").
    package var rssiUnknown = 0
    /// Sightings heard on an untrusted clock and held until it is trusted: not in the log yet,
    /// so in none of the counts above (the daemon sets it; issue 40).
    package var held = 0

    /// Reads the log's records from `since` (moved up to 14 days before `until` at most) to
    /// `until`. Damaged records are skipped, as detection skips them.
    package init(reader: ContactLogReader, since requested: UnixTime, until: UnixTime) throws(ContactLogError) {
        let since = max(requested, until.adding(seconds: -Self.longestSpan))
        self.since = min(since, until)
        self.until = until
        let firstHour = ContactLogStatistics.hour(of: self.since)
        let hourCount = Int((ContactLogStatistics.hour(of: until).seconds - firstHour.seconds) / 3600) + 1
        hours = (0..<hourCount).map { Hour(start: firstHour.adding(seconds: Int64($0) * 3600), counts: Counts()) }
        let bucketCount = (Self.rssiTop - Self.rssiBottom) / Self.rssiBucketWidth + 2
        var buckets = [Int](repeating: 0, count: bucketCount)
        // Distinct RPIs in bounded memory: exact up to 1,024 a span, estimated past it.
        let seed = Int.random(in: .min ... .max)
        var allRPIs = DistinctRPIs(seed: seed)
        var hourRPIs = [DistinctRPIs](repeating: DistinctRPIs(seed: seed), count: hourCount)
        let range = UTCDay(containing: self.since)...UTCDay(containing: until)
        let start = self.since
        var hours = self.hours
        var total = Counts()
        var unknown = 0
        func slot(_ time: UnixTime) -> Int? {
            guard time >= start, time <= until else { return nil }
            return Int((time.seconds - firstHour.seconds) / 3600)
        }
        try reader.forEachRecord(in: range) { record in
            switch record {
            case .aggregate(let aggregate):
                guard let index = slot(aggregate.firstSeen) else { return }
                hours[index].counts.add(aggregate)
                total.add(aggregate)
                hourRPIs[index].insert(aggregate.rpi.bytes)
                allRPIs.insert(aggregate.rpi.bytes)
                if let strongest = aggregate.rssi.maximum {
                    buckets[Self.bucket(of: Int(strongest))] += 1
                } else {
                    unknown += 1
                }
            case .scanWindow(let window):
                guard let index = slot(window.start) else { return }
                hours[index].counts.add(window)
                total.add(window)
            }
        }
        for index in hours.indices { hours[index].counts.distinctRPIs = hourRPIs[index].count }
        total.distinctRPIs = allRPIs.count
        self.hours = hours
        self.total = total
        rssiUnknown = unknown
        rssi = buckets.indices.map { index in
            let lowest = index == 0 ? nil : Self.rssiBottom + (index - 1) * Self.rssiBucketWidth
            let highest = index == bucketCount - 1 ? nil : Self.rssiBottom + index * Self.rssiBucketWidth - 1
            return RSSIBucket(lowest: lowest, highest: highest, sightings: buckets[index])
        }
    }

    /// The bucket of a reading: 0 below `rssiBottom`, the last from `rssiTop` up.
    package static func bucket(of rssi: Int) -> Int {
        if rssi < rssiBottom { return 0 }
        if rssi >= rssiTop { return (rssiTop - rssiBottom) / rssiBucketWidth + 1 }
        return (rssi - rssiBottom) / rssiBucketWidth + 1
    }

    /// The shape `GetHeard` returns and `gaenctl heard --json` prints (docs/schemas/heard.schema.json).
    package var json: JSONValue {
        func counts(_ counts: Counts) -> [(String, JSONValue)] {
            [
                ("sightings", .int(Int64(counts.aggregates))), ("distinct_rpis", .int(Int64(counts.distinctRPIs))),
                ("scan_windows", .int(Int64(counts.scanWindows))), ("listening_seconds", .int(counts.listeningMilliseconds / 1000)),
                ("dropped_rpis", .int(Int64(counts.droppedRPIs))), ("dropped_reports", .int(Int64(counts.droppedReports))),
            ]
        }
        return .object(
            [("since", .int(since.seconds)), ("until", .int(until.seconds))] + counts(total) + [
                ("hours", .array(hours.map { .object([("start", .int($0.start.seconds))] + counts($0.counts)) })),
                (
                    "rssi",
                    .array(
                        rssi.map {
                            .object([
                                ("lowest", $0.lowest.map { .int(Int64($0)) } ?? .null), ("highest", $0.highest.map { .int(Int64($0)) } ?? .null),
                                ("sightings", .int(Int64($0.sightings))),
                            ])
                        })
                ),
                ("rssi_unknown", .int(Int64(rssiUnknown))), ("held_sightings", .int(Int64(held))),
            ])
    }
}
