// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles

/// What windows score under a configuration: the daily summaries, SwissCovid's per-day minutes
/// when that is the rule, and the verdict. The daemon's runs, GetDailySummaries, `gaenctl tools
/// match` and `gaenctl tools score` all come here, so they cannot disagree.
package struct WindowScores: Sendable {
    package var dailySummaries: [DailySummary]
    package var perDay: [PerDayResult]
    package var verdict: ExposureVerdict
    /// Corona-Warn-App's result, when its rule is the configuration's.
    package var coronaWarnApp: CoronaWarnAppRiskResult? = nil
}

/// Applies a configuration's rule to windows (docs/detection.md, "The verdict"). A score of 0 is
/// never an exposure, whatever the rule.
package enum ExposureJudge {
    /// The exposure days of a v1-only configuration, decided from keys rather than windows.
    package struct V1Exposures: Sendable {
        package var days: Set<UTCDay>
        package var lastExposure: UnixTime?

        package init(days: Set<UTCDay>, lastExposure: UnixTime?) {
            self.days = days
            self.lastExposure = lastExposure
        }
    }

    package static func score(
        _ windows: [ExposureWindow], configuration: ExposureConfiguration, today: UTCDay, v1: V1Exposures? = nil
    ) -> WindowScores {
        let v2 = configuration.v2 ?? V2Configuration()
        // Daily summaries where the configuration has v2 weights, or nothing else: a configuration of
        // v1 scores or of SwissCovid's minutes alone asks for none (SwissCovid read windows only).
        let scoresV2 = configuration.v2 != nil || (configuration.v1 == nil && configuration.perDay == nil)
        let summaries = scoresV2 ? DailySummaryScorer.summaries(windows, configuration: v2, today: today) : []
        let perDay = configuration.perDay.map { PerDayCheck.results(windows, configuration: $0, today: today) } ?? []
        let days: [ExposureDay]
        switch configuration.rule {
        case .perDayDuration:
            days = perDay.filter(\.exposed).map { ExposureDay(day: $0.day) }
        case .v1RiskScore:
            let verdict = ExposureVerdict(days: (v1?.days ?? []).sorted().map { ExposureDay(day: $0) }, lastExposure: v1?.lastExposure)
            return WindowScores(dailySummaries: summaries, perDay: perDay, verdict: verdict)
        case .coronaWarnApp(let parameters):
            let risk = CoronaWarnAppRisk.evaluate(windows, parameters: parameters, today: today)
            let verdict = ExposureVerdict(days: risk.highRiskDays.map { ExposureDay(day: $0) }, lastExposure: risk.lastHighRiskExposure)
            return WindowScores(dailySummaries: summaries, perDay: perDay, verdict: verdict, coronaWarnApp: risk)
        case .scoreAboveZero, .minimumDailyScore, .classifications:
            days = exposureDays(summaries, rule: configuration.rule)
        }
        let daySet = Set(days.map(\.day))
        let counted = windows.filter { window in
            guard daySet.contains(window.day) else { return false }
            if let perDayConfiguration = configuration.perDay {
                return ReportTypeKey(rawValue: Int(window.reportType.rawValue)) != nil
                    && window.scanInstances.contains { $0.typicalAttenuation < perDayConfiguration.attenuationThresholds[1] }
            }
            return (DailySummaryScorer.score(window, configuration: v2, today: today)?.score ?? 0) > 0
        }
        let verdict = ExposureVerdict(days: days, lastExposure: counted.compactMap(\.start).max())
        return WindowScores(dailySummaries: summaries, perDay: perDay, verdict: verdict)
    }

    /// The exposure days the daily summaries make under a rule that judges summaries (the others,
    /// SwissCovid's and v1's, judge windows and keys: no day here).
    package static func exposureDays(_ summaries: [DailySummary], rule: ExposureRule) -> [ExposureDay] {
        switch rule {
        case .scoreAboveZero:
            return summaries.filter { $0.total.scoreSum > 0 }.map { ExposureDay(day: $0.day) }
        case .minimumDailyScore(let minimum):
            // Koronavilkku's Android app rounds the day's scoreSum, ties up (Kotlin roundToInt), and
            // compares with ≥ (ExposureUpdateWorker).
            return summaries.filter { $0.total.scoreSum > 0 && ($0.total.scoreSum + 0.5).rounded(.down) >= minimum }.map { ExposureDay(day: $0.day) }
        case .classifications(let classifications):
            return summaries.sorted { $0.day < $1.day }.compactMap { summary in
                guard summary.total.scoreSum > 0,
                    let best = classifications.filter({ $0.isReached(by: summary) }).min(by: { $0.index < $1.index })
                else { return nil }
                return ExposureDay(day: summary.day, classification: Classification(index: best.index, name: best.name))
            }
        case .perDayDuration, .v1RiskScore, .coronaWarnApp:
            return []
        }
    }
}
