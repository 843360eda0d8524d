// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
public import KeyFiles
import ContactLog

/// One exposure of the v1 API (Apple's `ENExposureInfo`).
public struct V1ExposureInfo: Hashable, Sendable {
    /// UTC day of the exposure's first scan.
    public var date: UTCDay
    /// Minutes, in 5-minute steps, capped at 30.
    public var durationMinutes: Int
    /// Time-weighted attenuation over the exposure, dB.
    public var attenuationValue: Int
    public var transmissionRiskLevel: Int
    public var totalRiskScore: Int
    /// Seconds below the low threshold, between the thresholds, and at or above the high one.
    public var attenuationDurations: [Int]
}

/// v1's `ENExposureDetectionSummary`.
public struct V1Summary: Hashable, Sendable {
    public var daysSinceLastExposure: Int?
    public var matchedKeyCount: Int
    public var maximumRiskScore: Int
    /// Minutes per attenuation bucket, summed over exposures, each capped at 30.
    public var attenuationDurationsMinutes: [Int]
}

/// v1 scoring as Google's `KeyExposureEvaluator` and `RiskScoreCalculator` ship it (gaen-spec.md §4.5):
///
/// - an exposure is a key's scans with gaps of at most 600 s; each scan's attenuation is TX power −
///   its strongest RSSI;
/// - each scan carries the time to the next scan, and the first and last 150 s more, so the exposure
///   lasts last − first + 300 s, rounded to the nearest 300 s (a remainder of 150 s rounds down);
/// - attenuation value = the time-weighted mean; attenuation durations split the same time by < low,
///   low ≤ a < high, ≥ high;
/// - risk = attenuation × days × duration × transmission-risk scores (or their weighted average when
///   the configuration asks for the preliminary formula); below the minimum it becomes 0.
public enum V1Scorer {
    public static let maximumGapSeconds: Int64 = 600

    public static func exposures(for match: KeyMatch, configuration: V1Configuration, today: UTCDay) -> [V1ExposureInfo] {
        guard match.key.reportType != .revoked, match.key.reportType != .recursive else { return [] }
        let scans = WindowBuilder.instanceGroups(match.sightings).map { group -> (time: Int64, attenuation: Int) in
            let tx = Int(group[0].metadata.txPower)
            let strongest = group.compactMap(\.aggregate.rssi.maximum).max().map(Int.init) ?? tx
            return (group[0].aggregate.firstSeen.seconds, max(0, tx - strongest))
        }
        var exposures = [[(time: Int64, attenuation: Int)]]()
        for scan in scans {
            if let last = exposures.last?.last, scan.time - last.time <= maximumGapSeconds {
                exposures[exposures.count - 1].append(scan)
            } else {
                exposures.append([scan])
            }
        }
        return exposures.map { info(for: $0, key: match.key, configuration: configuration, today: today) }
    }

    static func info(
        for scans: [(time: Int64, attenuation: Int)], key: DiagnosisKey, configuration: V1Configuration, today: UTCDay
    ) -> V1ExposureInfo {
        var durations = [Int64]()
        for index in scans.indices {
            var seconds = index + 1 < scans.count ? scans[index + 1].time - scans[index].time : 0
            if index == 0 { seconds += 150 }
            if index == scans.count - 1 { seconds += 150 }
            durations.append(seconds)
        }
        let total = durations.reduce(0, +)
        let weighted = zip(durations, scans).reduce(0.0) { $0 + Double($1.0) * Double($1.1.attenuation) }
        let attenuationValue = WindowBuilder.javaRound(weighted / Double(max(total, 1)))
        let rounded = total % 300 <= 150 ? total - total % 300 : total - total % 300 + 300
        let minutes = Int(rounded / 60)
        let (low, high) = (configuration.attenuationDurationThresholds[0], configuration.attenuationDurationThresholds[1])
        var buckets = [0, 0, 0]
        for (seconds, scan) in zip(durations, scans) {
            buckets[scan.attenuation < low ? 0 : (scan.attenuation < high ? 1 : 2)] += Int(seconds)
        }
        let date = UTCDay(containing: UnixTime(seconds: scans[0].time))
        let days = Int(date.distance(to: today))
        let risk = Int(key.transmissionRiskLevel)
        let scores = (
            attenuation: configuration.attenuationScores[attenuationBucket(attenuationValue)],
            days: configuration.daysSinceLastExposureScores[daysBucket(days)],
            duration: configuration.durationScores[durationBucket(minutes)],
            transmission: risk == 0 ? 1 : configuration.transmissionRiskScores[min(risk, 8) - 1]
        )
        var score: Int
        switch configuration.formula {
        case .product:
            score = scores.attenuation * scores.days * scores.duration * scores.transmission
        case .weightedAverage:
            let weights = configuration.attenuationWeight + configuration.daysSinceLastExposureWeight + configuration.durationWeight
                + configuration.transmissionRiskWeight
            let sum = Double(scores.attenuation) * configuration.attenuationWeight + Double(scores.days) * configuration.daysSinceLastExposureWeight
                + Double(scores.duration) * configuration.durationWeight + Double(scores.transmission) * configuration.transmissionRiskWeight
            score = weights > 0 ? WindowBuilder.javaRound(sum / weights) : 0
        }
        if score < configuration.minimumRiskScore { score = 0 }
        return V1ExposureInfo(
            date: date, durationMinutes: min(minutes, 30), attenuationValue: attenuationValue, transmissionRiskLevel: risk,
            totalRiskScore: score, attenuationDurations: buckets)
    }

    /// The summary of every exposure of every matched key.
    public static func summary(_ exposures: [(key: DiagnosisKey, infos: [V1ExposureInfo])], today: UTCDay) -> V1Summary {
        let all = exposures.flatMap(\.infos)
        var minutes = [0, 0, 0]
        for info in all {
            for bucket in 0..<3 { minutes[bucket] += info.attenuationDurations[bucket] }
        }
        return V1Summary(
            daysSinceLastExposure: all.map { Int($0.date.distance(to: today)) }.min(),
            matchedKeyCount: exposures.count { !$0.infos.isEmpty },
            maximumRiskScore: all.map(\.totalRiskScore).max() ?? 0,
            attenuationDurationsMinutes: minutes.map { min(30, $0 / 60) })
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
