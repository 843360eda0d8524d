// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles

/// The sums of one UTC day (Apple's `ENExposureSummaryItem`).
package struct SummaryData: Hashable, Sendable {
    package var maximumScore: Double = 0
    package var scoreSum: Double = 0
    /// Seconds.
    package var weightedDurationSum: Double = 0

    package init(maximumScore: Double = 0, scoreSum: Double = 0, weightedDurationSum: Double = 0) {
        self.maximumScore = maximumScore
        self.scoreSum = scoreSum
        self.weightedDurationSum = weightedDurationSum
    }

    mutating func add(score: Double, weightedDuration: Double) {
        maximumScore = max(maximumScore, score)
        scoreSum += score
        weightedDurationSum += weightedDuration
    }
}

/// v2 daily summary: all windows of a UTC day, and per report type.
package struct DailySummary: Hashable, Sendable {
    package var day: UTCDay
    package var total: SummaryData
    package var byReportType: [ReportTypeKey: SummaryData]

    package init(day: UTCDay, total: SummaryData, byReportType: [ReportTypeKey: SummaryData] = [:]) {
        self.day = day
        self.total = total
        self.byReportType = byReportType
    }
}

/// Scores exposure windows into daily summaries as Google's `DailySummaryUtils` does, with Apple's
/// percent weights (gaen-spec.md §4.3):
///
/// - windows of report type REVOKED or UNKNOWN (unmapped), or of infectiousness NONE, are dropped;
/// - with a days-since-last-exposure threshold, windows more than that many days old are dropped;
/// - each scan instance's secondsSinceLastScan is weighted by its bucket: typical attenuation
///   ≤ t0 immediate, ≤ t1 near, ≤ t2 medium, else other;
/// - score = weighted duration × report-type weight × infectiousness weight; windows below the
///   minimum window score are dropped.
package enum DailySummaryScorer {
    package static func summaries(_ windows: [ExposureWindow], configuration: V2Configuration, today: UTCDay) -> [DailySummary] {
        var days: [UTCDay: DailySummary] = [:]
        for window in windows {
            guard let scored = score(window, configuration: configuration, today: today) else { continue }
            var summary = days[window.day] ?? DailySummary(day: window.day, total: SummaryData(), byReportType: [:])
            summary.total.add(score: scored.score, weightedDuration: scored.weightedDuration)
            summary.byReportType[scored.type, default: SummaryData()].add(score: scored.score, weightedDuration: scored.weightedDuration)
            days[window.day] = summary
        }
        return days.values.sorted { $0.day < $1.day }
    }

    /// A window's weighted duration (seconds) and score, or `nil` when the rules drop it.
    package static func score(
        _ window: ExposureWindow, configuration: V2Configuration, today: UTCDay
    ) -> (type: ReportTypeKey, weightedDuration: Double, score: Double)? {
        guard let type = ReportTypeKey(rawValue: Int(window.reportType.rawValue)), window.infectiousness != .none else { return nil }
        if configuration.daysSinceLastExposureThreshold > 0, window.day.distance(to: today) > Int64(configuration.daysSinceLastExposureThreshold) {
            return nil
        }
        let thresholds = configuration.attenuationThresholds
        var weightedDuration = 0.0
        for instance in window.scanInstances {
            let bucket = thresholds.firstIndex { instance.typicalAttenuation <= $0 } ?? 3
            weightedDuration += Double(instance.secondsSinceLastScan) * configuration.bucketWeights[bucket] / 100
        }
        let infectiousnessWeight =
            window.infectiousness == .high ? configuration.infectiousnessHighWeight : configuration.infectiousnessStandardWeight
        let score = weightedDuration * (configuration.reportTypeWeights[type] ?? 0) / 100 * infectiousnessWeight / 100
        guard score >= configuration.minimumWindowScore else { return nil }
        return (type, weightedDuration, score)
    }
}
