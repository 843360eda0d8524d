// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles
import ContactLog

/// One exposure of the v1 API (Apple's `ENExposureInfo`, GMS's `ExposureInformation`).
package struct V1ExposureInfo: Hashable, Sendable {
    /// The UTC day of the key's rolling start: GMS dates an exposure by its key
    /// (`KeyExposureEvaluator.findExposures`, `date_millis_since_epoch`), not by its first scan.
    package var date: UTCDay
    /// Whole days from the key's rolling start to the time of scoring (`bucketLatencyDays`).
    package var daysSinceExposure: Int
    /// Minutes, in 5-minute steps, capped at 30.
    package var durationMinutes: Int
    /// Time-weighted attenuation over the exposure, dB.
    package var attenuationValue: Int
    package var transmissionRiskLevel: Int
    package var totalRiskScore: Int
    /// Seconds below the low threshold, between the thresholds, and at or above the high one.
    package var attenuationDurations: [Int]
}

/// v1's `ENExposureDetectionSummary` (GMS `ExposureSummary`).
package struct V1Summary: Hashable, Sendable {
    package var daysSinceLastExposure: Int?
    /// Keys with at least one exposure.
    package var matchedKeyCount: Int
    /// Apple's `maximumRiskScore`: an `ENRiskScore`, capped at 255.
    package var maximumRiskScore: Int
    /// Apple's `maximumRiskScoreFullRange`: the same, uncapped (up to 8⁴ = 4096).
    package var maximumRiskScoreFullRange: Int
    /// GMS's `summationRiskScore`, Apple's `riskScoreSumFullRange`: every exposure's score, summed.
    package var summationRiskScore: Int
    /// Minutes per attenuation bucket, summed over exposures, each capped at 30.
    package var attenuationDurationsMinutes: [Int]
}

/// v1 scoring as Google's `KeyExposureEvaluator.findExposures` and `RiskScoreCalculator` ship it
/// (gaen-spec.md §4.5; docs/detection.md, "v1"):
///
/// - the key's sightings are aggregated per RPI into scans (a gap over 25.5 s starts a new scan),
///   each scan keeping its strongest sighting and that sighting's time
///   (`ExposureMatchingTracer.getValidSightingsForRpi`); a scan's attenuation is
///   max(TX power − RSSI, 0) with its own decrypted TX power (`SightingRecordWithMetadata`);
/// - an exposure is the key's scans, in time order, with gaps of at most 600 s;
/// - its periods run from 150 s before the first scan to 150 s after the last, each carrying the
///   attenuation of the scan it starts at; the duration is last − first + 300 s rounded to the
///   nearest 300 s (a remainder of 150 s rounds down);
/// - attenuation value = the periods' time-weighted mean; attenuation durations split the same time
///   by < low, low ≤ a < high, ≥ high (no interpolation);
/// - risk = attenuation × days × duration × transmission-risk scores (or their weighted average
///   when the configuration asks for the preliminary formula), days counted from the key's rolling
///   start; below the minimum it becomes 0.
package enum V1Scorer {
    package static let maximumGapSeconds: Int64 = 600
    /// GMS: 1.5 × (4 s scan + 13 s extension).
    package static let sameScanMilliseconds: Int64 = 25_500
    package static let scanIntervalSeconds: Int64 = 300

    struct Scan {
        var time: Int64
        var attenuation: Int
    }

    package static func exposures(for match: KeyMatch, configuration: V1Configuration, now: UnixTime) -> [V1ExposureInfo] {
        guard match.key.reportType != .revoked, match.key.reportType != .recursive else { return [] }
        var exposures = [[Scan]]()
        for scan in scans(match.sightings) {
            if let last = exposures.last?.last, scan.time - last.time <= maximumGapSeconds {
                exposures[exposures.count - 1].append(scan)
            } else {
                exposures.append([scan])
            }
        }
        return exposures.map { info(for: $0, key: match.key, configuration: configuration, now: now) }
    }

    /// The sightings aggregated per RPI into scans, strongest sighting each, in time order.
    static func scans(_ sightings: [MatchedSighting]) -> [Scan] {
        var byRPI = [RollingProximityIdentifier: [MatchedSighting]]()
        for sighting in sightings { byRPI[sighting.aggregate.rpi, default: []].append(sighting) }
        var scans = [(order: Int, scan: Scan)]()
        // Groups in the order of their first sighting, so that scans at the same second keep one order.
        let groups = byRPI.values.sorted { $0.map(\.aggregate.firstSeen).min()! < $1.map(\.aggregate.firstSeen).min()! }
        for group in groups {
            let sorted = group.sorted { $0.aggregate.firstSeen < $1.aggregate.firstSeen }
            var chosen = [MatchedSighting]()
            var previous: MatchedSighting?
            for sighting in sorted {
                if let previous, sighting.aggregate.firstSeen.milliseconds - previous.aggregate.lastSeen.milliseconds <= sameScanMilliseconds {
                    // Replaced only by a strictly stronger one, as GMS does.
                    if (sighting.aggregate.rssi.maximum ?? .min) > (chosen[chosen.count - 1].aggregate.rssi.maximum ?? .min) {
                        chosen[chosen.count - 1] = sighting
                    }
                } else {
                    chosen.append(sighting)
                }
                previous = sighting
            }
            for sighting in chosen {
                let strongest = Int(sighting.aggregate.rssi.maximum ?? sighting.metadata.txPower)
                let time = WindowBuilder.floorDiv(sighting.aggregate.firstSeen.milliseconds, 1000)
                scans.append((scans.count, Scan(time: time, attenuation: max(0, Int(sighting.metadata.txPower) - strongest))))
            }
        }
        return scans.sorted { ($0.scan.time, $0.order) < ($1.scan.time, $1.order) }.map(\.scan)
    }

    static func info(for scans: [Scan], key: DiagnosisKey, configuration: V1Configuration, now: UnixTime) -> V1ExposureInfo {
        // GMS computePeriods: boundary points half a scan interval out, zero-length periods skipped.
        let margin = scanIntervalSeconds / 2
        let points =
            [Scan(time: scans[0].time - margin, attenuation: scans[0].attenuation)] + scans
            + [Scan(time: scans[scans.count - 1].time + margin, attenuation: scans[scans.count - 1].attenuation)]
        var periods = [(seconds: Int64, attenuation: Int)]()
        var start = points[0]
        for point in points.dropFirst() where point.time != start.time {
            periods.append((point.time - start.time, start.attenuation))
            start = point
        }
        let total = periods.reduce(0) { $0 + $1.seconds }
        let weighted = periods.reduce(0.0) { $0 + Double($1.seconds) * Double($1.attenuation) }
        let attenuationValue = WindowBuilder.javaRound(weighted / Double(max(total, 1)))
        let estimate = scans[scans.count - 1].time - scans[0].time + scanIntervalSeconds
        let remainder = estimate % scanIntervalSeconds
        let bucketized = remainder <= scanIntervalSeconds / 2 ? estimate - remainder : estimate - remainder + scanIntervalSeconds
        let minutes = Int(bucketized / 60)
        let (low, high) = (configuration.attenuationDurationThresholds[0], configuration.attenuationDurationThresholds[1])
        var buckets = [0, 0, 0]
        for period in periods {
            buckets[period.attenuation < low ? 0 : (period.attenuation < high ? 1 : 2)] += Int(period.seconds)
        }
        let keyStart = key.key.rollingStartIntervalNumber.start
        // Java's MILLISECONDS.toDays truncates toward zero.
        let days = Int((now.milliseconds - keyStart.milliseconds) / 86_400_000)
        let risk = Int(key.transmissionRiskLevel)
        let scores = (
            attenuation: configuration.attenuationScores[attenuationBucket(attenuationValue)],
            days: configuration.daysSinceLastExposureScores[daysBucket(days)],
            duration: configuration.durationScores[durationBucket(minutes)],
            // RISK_LEVEL_INVALID (0) scores 1; the level is 0...8 once read (ExportBinary clamps it).
            transmission: risk <= 0 ? 1 : configuration.transmissionRiskScores[min(risk, 8) - 1]
        )
        var score: Int
        switch configuration.formula {
        case .product:
            score = scores.attenuation * scores.days * scores.duration * scores.transmission
        case .weightedAverage:
            let weights =
                configuration.attenuationWeight + configuration.daysSinceLastExposureWeight + configuration.durationWeight
                + configuration.transmissionRiskWeight
            let sum =
                Double(scores.attenuation) * configuration.attenuationWeight + Double(scores.days) * configuration.daysSinceLastExposureWeight
                + Double(scores.duration) * configuration.durationWeight + Double(scores.transmission) * configuration.transmissionRiskWeight
            score = weights > 0 ? WindowBuilder.javaRound(sum / weights) : 0
        }
        if score < configuration.minimumRiskScore { score = 0 }
        return V1ExposureInfo(
            date: key.key.rollingStartIntervalNumber.utcDay, daysSinceExposure: days, durationMinutes: min(minutes, 30),
            attenuationValue: attenuationValue, transmissionRiskLevel: risk, totalRiskScore: score, attenuationDurations: buckets)
    }

    /// The summary of every exposure of every matched key; `exposures` holds one list per key.
    package static func summary(_ exposures: [[V1ExposureInfo]]) -> V1Summary {
        let all = exposures.flatMap { $0 }
        var seconds = [0, 0, 0]
        for info in all {
            for bucket in 0..<3 { seconds[bucket] += info.attenuationDurations[bucket] }
        }
        let maximum = all.map(\.totalRiskScore).max() ?? 0
        return V1Summary(
            daysSinceLastExposure: all.map(\.daysSinceExposure).min(),
            matchedKeyCount: exposures.count { !$0.isEmpty },
            maximumRiskScore: min(255, maximum), maximumRiskScoreFullRange: maximum,
            summationRiskScore: all.reduce(0) { $0 + $1.totalRiskScore },
            attenuationDurationsMinutes: seconds.map { min(30, $0 / 60) })
    }

    /// Attenuation buckets: > 73, > 63, > 51, > 33, > 27, > 15, > 10, else.
    static func attenuationBucket(_ value: Int) -> Int {
        [73, 63, 51, 33, 27, 15, 10].firstIndex { value > $0 } ?? 7
    }

    /// Days buckets: ≥ 14, ≥ 12, ≥ 10, ≥ 8, ≥ 6, ≥ 4, ≥ 2, else.
    static func daysBucket(_ days: Int) -> Int {
        [14, 12, 10, 8, 6, 4, 2].firstIndex { days >= $0 } ?? 7
    }

    /// Duration buckets in minutes: 0, ≤ 5, ≤ 10, ≤ 15, ≤ 20, ≤ 25, ≤ 30, > 30.
    static func durationBucket(_ minutes: Int) -> Int {
        if minutes <= 0 { return 0 }
        return [5, 10, 15, 20, 25, 30].firstIndex { minutes <= $0 }.map { $0 + 1 } ?? 7
    }
}
