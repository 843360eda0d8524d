// SPDX-License-Identifier: GPL-3.0-or-later

package import ContactLog
import ENCore
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
    /// Intervals a key must come within ±12 of to be worth deriving: the indexed days.
    private let covered: Range<Int64>

    package static let toleranceIntervals: Int64 = 12
    package static let replayGuardSeconds: Int64 = 20 * 60
    package static let txPowerBounds: ClosedRange<Int8> = -50...20

    package init(index: MatchingIndex) {
        self.index = index
        if let first = index.days.first, let last = index.days.last {
            covered = (first.daysSinceEpoch * 144)..<((last.daysSinceEpoch + 1) * 144)
        } else {
            covered = 0..<0
        }
    }

    /// Matches `keys` using up to `parallelism` tasks; `progress` is told the keys done so far.
    package func match(
        _ keys: [DiagnosisKey], parallelism: Int, progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> (matches: [KeyMatch], statistics: MatchStatistics) {
        let chunkSize = 8192
        let chunks = stride(from: 0, to: keys.count, by: chunkSize).map { $0..<min($0 + chunkSize, keys.count) }
        let workers = max(1, min(parallelism, chunks.count))
        return try await withThrowingTaskGroup(of: ([KeyMatch], MatchStatistics).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let crypto = try ExposureKeyCrypto()
                    var matches = [KeyMatch]()
                    var statistics = MatchStatistics()
                    for chunk in stride(from: worker, to: chunks.count, by: workers) {
                        try Task.checkCancellation()
                        self.match(keys[chunks[chunk]], crypto: crypto, into: &matches, statistics: &statistics)
                        progress?(chunks[chunk].count)
                        // With as many workers as the pool has threads, nothing else would run
                        // until a worker ended: D-Bus answers and the beacon's rotation wait
                        // at most one chunk instead.
                        await Task.yield()
                    }
                    return (matches, statistics)
                }
            }
            var matches = [KeyMatch]()
            var statistics = MatchStatistics()
            for try await (partial, counts) in group {
                matches += partial
                statistics.add(counts)
            }
            return (matches, statistics)
        }
    }

    /// Matches a slice of keys on the calling task.
    package func match(
        _ keys: ArraySlice<DiagnosisKey>, crypto: ExposureKeyCrypto, into matches: inout [KeyMatch], statistics: inout MatchStatistics
    ) {
        let rpis = UnsafeMutablePointer<RollingProximityIdentifier>.allocate(capacity: ExposureKeyCrypto.maximumBatch)
        defer { rpis.deallocate() }
        var candidates = [Int]()
        candidates.reserveCapacity(8)
        let filter = index.filter
        for key in keys {
            statistics.keys += 1
            let start = Int64(key.key.rollingStartIntervalNumber.rawValue)
            let end = start + Int64(key.key.rollingPeriod)
            guard key.reportType != .recursive, start - Self.toleranceIntervals < covered.upperBound,
                end + Self.toleranceIntervals > covered.lowerBound
            else {
                statistics.keysSkipped += 1
                continue
            }
            let count = Int(key.key.rollingPeriod)
            crypto.rpis(rpik: crypto.rpik(for: key.key.keyData), startingAt: key.key.rollingStartIntervalNumber, count: count, into: rpis)
            statistics.rpisDerived += count
            candidates.removeAll(keepingCapacity: true)
            for offset in 0..<count where filter.mayContain(rpis[offset]) {
                candidates.append(offset)
            }
            guard !candidates.isEmpty else { continue }
            statistics.candidates += candidates.count
            if let match = sightings(of: key, rpis: rpis, offsets: candidates, crypto: crypto, statistics: &statistics) {
                matches.append(match)
                statistics.matchedKeys += 1
            }
        }
    }

    /// The sightings of the RPIs at `offsets` that pass the rules, or `nil` if none do.
    private func sightings(
        of key: DiagnosisKey, rpis: UnsafeMutablePointer<RollingProximityIdentifier>, offsets: [Int], crypto: ExposureKeyCrypto,
        statistics: inout MatchStatistics
    ) -> KeyMatch? {
        var found = [(RollingProximityIdentifier, [ContactAggregate])]()
        for offset in offsets {
            let rpi = rpis[offset]
            let interval = Int64(key.key.rollingStartIntervalNumber.rawValue) + Int64(offset)
            var kept = [ContactAggregate]()
            for aggregate in index.aggregates(of: rpi) {
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
