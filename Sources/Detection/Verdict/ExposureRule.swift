// SPDX-License-Identifier: GPL-3.0-or-later

/// How a health authority decides that a UTC day was an exposure, on top of GAEN's windows and
/// daily summaries (docs/detection.md, "The verdict"). One rule per configuration: the file that
/// configures the weights configures the rule, as each authority's app did.
package enum ExposureRule: Hashable, Sendable {
    /// No rule configured: a day whose daily scoreSum is above 0 (its windows already passed
    /// minimumWindowScore).
    case scoreAboveZero
    /// Finland's Koronavilkku: a day whose scoreSum reaches `minimumDailyScore`.
    case minimumDailyScore(Double)
    /// Exposure Notifications Express: the first classification, by index, any of whose thresholds
    /// a day reaches (`DailySummaryRiskCalculator`).
    case classifications([ClassificationThresholds])
    /// SwissCovid's per-day attenuation-duration rule, as DP-3T's v2 SDKs apply it to windows.
    case perDayDuration(PerDayConfiguration)
    /// A v1-only configuration: the days of exposures whose risk score is above 0 after
    /// `minimumRiskScore` (the v1 frameworks' `ENExposureInfo.totalRiskScore`).
    case v1RiskScore
    /// Corona-Warn-App's `riskCalculationParameters`: the days of high risk (`CoronaWarnAppRisk`).
    case coronaWarnApp(CoronaWarnAppRiskParameters)
}

/// One ENX classification: an index (1 is the most severe), the authority's name for it, and its
/// thresholds in weighted seconds, each 0 when unused (ENX `ClassificationThreshold`).
package struct ClassificationThresholds: Hashable, Sendable {
    package var index: Int
    package var name: String
    /// Per report type: the day's scoreSum of windows of that type.
    package var scoreSumByReportType: [ReportTypeKey: Double]
    /// The day's scoreSum over all report types.
    package var scoreSum: Double
    /// The day's maximum window score.
    package var maximumScore: Double
    /// The day's weighted duration, seconds.
    package var weightedDuration: Double

    package init(
        index: Int, name: String, scoreSumByReportType: [ReportTypeKey: Double] = [:], scoreSum: Double = 0, maximumScore: Double = 0,
        weightedDuration: Double = 0
    ) {
        self.index = index
        self.name = name
        self.scoreSumByReportType = scoreSumByReportType
        self.scoreSum = scoreSum
        self.maximumScore = maximumScore
        self.weightedDuration = weightedDuration
    }

    /// Whether `summary` reaches any threshold: a threshold of 0 is unused, and a reached one is
    /// `≥` (ENX `DailySummaryRiskCalculator.isThresholdMet`).
    package func isReached(by summary: DailySummary) -> Bool {
        func reached(_ threshold: Double, _ value: Double) -> Bool { threshold > 0 && value >= threshold }
        for (type, threshold) in scoreSumByReportType where reached(threshold, summary.byReportType[type]?.scoreSum ?? 0) { return true }
        return reached(scoreSum, summary.total.scoreSum) || reached(maximumScore, summary.total.maximumScore)
            || reached(weightedDuration, summary.total.weightedDurationSum)
    }
}
