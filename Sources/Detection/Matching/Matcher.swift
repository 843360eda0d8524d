// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
package import ENCore
package import ENCrypto
package import KeyFiles

/// Matches diagnosis keys against the logged RPIs, as Google's matcher does
/// (gaen-spec.md §4.1; docs/detection.md has every rule and where it comes from):
///
/// - RECURSIVE keys are skipped; REVOKED keys are matched (their windows are dropped by scoring);
/// - only the first `rolling_period` RPIs of a key are derived, all in one AES call;
/// - an aggregate counts for the RPI of interval j if it was first heard in j − 12 … j + 12 (±2 h);
/// - replay guard: aggregates of one RPI more than 20 minutes after its first are dropped;
/// - the AEM is decrypted (only for matches) and sightings whose TX power is outside −50…20 dBm, or
///   that have no valid RSSI, are dropped.
///
/// The index is shared read-only; each task derives with its own `ExposureKeyCrypto`.
package struct Matcher: Sendable {
    package let index: MatchingIndex
    /// Intervals a key must come within ±12 of to be worth deriving here: this index's days.
    private let covered: Range<Int64>
    /// The intervals of the whole log's days (every index of the run): a key outside them ±12 is
    /// skipped and counted so.
    private let logCovered: Range<Int64>
    /// What earlier indexes of the run (older days) found, merged in by the last one.
    private let earlier: PartialHits

    package static let toleranceIntervals: Int64 = 12
    package static let replayGuardSeconds: Int64 = 20 * 60
    package static let txPowerBounds: ClosedRange<Int8> = -50...20

    /// A matcher over one index that holds the whole log.
    package init(index: MatchingIndex) {
        self.init(index: index, logDays: index.days, earlier: PartialHits())
    }

    /// A matcher over one index of a log whose days are `logDays`; `earlier` holds what the
    /// indexes before it found (`collect`), to be judged with this one's hits by `match`.
    package init(index: MatchingIndex, logDays: [UTCDay], earlier: PartialHits) {
        self.index = index
        covered = Self.intervals(of: index.days)
        logCovered = Self.intervals(of: logDays)
        self.earlier = earlier
    }

    private static func intervals(of days: [UTCDay]) -> Range<Int64> {
        guard let first = days.first, let last = days.last else { return 0..<0 }
        return (first.daysSinceEpoch * 144)..<((last.daysSinceEpoch + 1) * 144)
    }

    /// Matches `keys` using up to `parallelism` tasks; `progress` is told the keys done so far.
    package func match(
        _ keys: [DiagnosisKey], parallelism: Int, progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> (matches: [KeyMatch], statistics: MatchStatistics) {
        try await inParallel(keys, parallelism: parallelism, progress: progress) { slice, crypto, statistics in
            var matches = [KeyMatch]()
            self.match(slice, crypto: crypto, into: &matches, statistics: &statistics)
            return matches
        }
    }

    /// What this index holds of each key's RPIs, no rule applied yet: for an index before the
    /// last, whose hits the last one's `match` judges with its own.
    package func collect(_ keys: [DiagnosisKey], parallelism: Int) async throws -> (hits: PartialHits, statistics: MatchStatistics) {
        let parts = try await inParallel(keys, parallelism: parallelism, progress: nil) { slice, crypto, statistics in
            var hits = PartialHits()
            let rpis = UnsafeMutablePointer<RollingProximityIdentifier>.allocate(capacity: ExposureKeyCrypto.maximumBatch)
            defer { rpis.deallocate() }
            for key in slice {
                let found = self.heard(key, crypto: crypto, rpis: rpis, statistics: &statistics)
                if !found.isEmpty { hits.set(found, for: key) }
            }
            return [hits]
        }
        var hits = PartialHits()
        for part in parts.matches { hits.union(part) }
        return (hits, parts.statistics)
    }

    private func inParallel<Part: Sendable>(
        _ keys: [DiagnosisKey], parallelism: Int, progress: (@Sendable (Int) -> Void)?,
        _ body: @escaping @Sendable (ArraySlice<DiagnosisKey>, ExposureKeyCrypto, inout MatchStatistics) -> [Part]
    ) async throws -> (matches: [Part], statistics: MatchStatistics) {
        let chunkSize = 8192
        let chunks = stride(from: 0, to: keys.count, by: chunkSize).map { $0..<min($0 + chunkSize, keys.count) }
        let workers = max(1, min(parallelism, chunks.count))
        return try await withThrowingTaskGroup(of: ([Part], MatchStatistics).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let crypto = try ExposureKeyCrypto()
                    var parts = [Part]()
                    var statistics = MatchStatistics()
                    for chunk in stride(from: worker, to: chunks.count, by: workers) {
                        try Task.checkCancellation()
                        parts += body(keys[chunks[chunk]], crypto, &statistics)
                        progress?(chunks[chunk].count)
                        // With as many workers as the pool has threads, nothing else would run
                        // until a worker ended: D-Bus answers and the beacon's rotation wait
                        // at most one chunk instead.
                        await Task.yield()
                    }
                    return (parts, statistics)
                }
            }
            var parts = [Part]()
            var statistics = MatchStatistics()
            for try await (partial, counts) in group {
                parts += partial
                statistics.add(counts)
            }
            return (parts, statistics)
        }
    }

    /// Matches a slice of keys on the calling task.
    package func match(
        _ keys: ArraySlice<DiagnosisKey>, crypto: ExposureKeyCrypto, into matches: inout [KeyMatch], statistics: inout MatchStatistics
    ) {
        let rpis = UnsafeMutablePointer<RollingProximityIdentifier>.allocate(capacity: ExposureKeyCrypto.maximumBatch)
        defer { rpis.deallocate() }
        for key in keys {
            statistics.keys += 1
            let start = Int64(key.key.rollingStartIntervalNumber.rawValue)
            let end = start + Int64(key.key.rollingPeriod)
            guard key.reportType != .recursive, start - Self.toleranceIntervals < logCovered.upperBound,
                end + Self.toleranceIntervals > logCovered.lowerBound
            else {
                statistics.keysSkipped += 1
                continue
            }
            var found = heard(key, crypto: crypto, rpis: rpis, statistics: &statistics)
            // Older days' aggregates of each RPI follow this index's: newest first, as one index.
            if !earlier.isEmpty, let older = earlier.hits(for: key) { found = PartialHits.merging(newer: found, older: older) }
            guard !found.isEmpty else { continue }
            if let match = sightings(of: key, found: found, crypto: crypto, statistics: &statistics) {
                matches.append(match)
                statistics.matchedKeys += 1
            }
        }
    }

    /// The aggregates this index holds of each of `key`'s RPIs that can match here (those within
    /// ±2 h of its days), by interval offset; no rule applied.
    private func heard(
        _ key: DiagnosisKey, crypto: ExposureKeyCrypto, rpis: UnsafeMutablePointer<RollingProximityIdentifier>, statistics: inout MatchStatistics
    ) -> [(offset: Int, aggregates: [ContactAggregate])] {
        guard key.reportType != .recursive else { return [] }
        let start = Int64(key.key.rollingStartIntervalNumber.rawValue)
        let first = max(start, covered.lowerBound - Self.toleranceIntervals)
        let end = min(start + Int64(key.key.rollingPeriod), covered.upperBound + Self.toleranceIntervals)
        guard first < end else { return [] }
        let count = Int(end - first)
        crypto.rpis(
            rpik: crypto.rpik(for: key.key.keyData), startingAt: ENIntervalNumber(rawValue: UInt32(first)), count: count, into: rpis)
        statistics.rpisDerived += count
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: count) { positions in
            let candidates = index.filters.candidates(rpis, firstInterval: first, count: count, into: positions.baseAddress!)
            statistics.candidates += candidates
            var found = [(offset: Int, aggregates: [ContactAggregate])]()
            for candidate in 0..<candidates {
                let position = Int(positions[candidate])
                let aggregates = index.aggregates(of: rpis[position])
                if !aggregates.isEmpty { found.append((Int(first - start) + position, aggregates)) }
            }
            return found
        }
    }

    /// The sightings of the RPIs found that pass the rules, or `nil` if none do.
    private func sightings(
        of key: DiagnosisKey, found candidates: [(offset: Int, aggregates: [ContactAggregate])], crypto: ExposureKeyCrypto,
        statistics: inout MatchStatistics
    ) -> KeyMatch? {
        var found = [(RollingProximityIdentifier, [ContactAggregate])]()
        let rpik = crypto.rpik(for: key.key.keyData)
        for (offset, aggregates) in candidates {
            let interval = Int64(key.key.rollingStartIntervalNumber.rawValue) + Int64(offset)
            let rpi = crypto.rpi(rpik: rpik, interval: ENIntervalNumber(rawValue: UInt32(interval)))
            var kept = [ContactAggregate]()
            for aggregate in aggregates {
                let heard = aggregate.firstSeen.seconds / ENIntervalNumber.seconds
                if abs(heard - interval) <= Self.toleranceIntervals {
                    kept.append(aggregate)
                } else {
                    statistics.droppedOutsideTolerance += 1
                }
            }
            guard let first = kept.map(\.firstSeen).min() else { continue }
            let guardEnd = first.adding(seconds: Self.replayGuardSeconds)
            let beforeGuard = kept.count
            kept.removeAll { $0.firstSeen > guardEnd }
            statistics.droppedByReplayGuard += beforeGuard - kept.count
            found.append((rpi, kept))
        }
        guard !found.isEmpty else { return nil }
        let aemk = crypto.aemk(for: key.key.keyData)
        var sightings = [MatchedSighting]()
        for (rpi, aggregates) in found {
            for aggregate in aggregates {
                let metadata = crypto.metadata(from: aggregate.aem, aemk: aemk, rpi: rpi)
                guard Self.txPowerBounds.contains(metadata.txPower) else {
                    statistics.droppedTxPower += 1
                    continue
                }
                guard aggregate.rssi.validReports > 0 else {
                    statistics.droppedNoRSSI += 1
                    continue
                }
                sightings.append(MatchedSighting(aggregate: aggregate, metadata: metadata))
            }
        }
        guard !sightings.isEmpty else { return nil }
        sightings.sort { $0.aggregate.firstSeen < $1.aggregate.firstSeen }
        return KeyMatch(key: key, sightings: sightings)
    }
}
