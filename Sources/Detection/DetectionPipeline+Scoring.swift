// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
package import ENCore
package import KeyFiles

extension DetectionPipeline {
    /// Every stored result of the last 14 days scored under `configuration`: what a run returns and
    /// what GetExposureWindows and GetDailySummaries answer, without matching again.
    package static func score(
        _ results: ExposureResults, statistics: MatchStatistics = MatchStatistics(),
        files: [KeyFileOutcome] = [], configuration: ExposureConfiguration, now: UnixTime
    ) -> DetectionResult {
        let today = UTCDay(containing: now)
        let v2 = configuration.v2 ?? V2Configuration()
        let stored = results.results
        var windows =
            stored.flatMap { result in
                WindowBuilder.windows(for: result.match, configuration: v2).map { window in
                    var window = window
                    window.matchedAt = result.matchedAt
                    return window
                }
            } + results.legacyWindows
        windows.removeAll { !ExposureResults.isRetained($0.day, today: today) }
        windows.shuffle()
        var v1Summary: V1Summary?
        var v1Exposures = [V1ExposureInfo]()
        var v1Days = Set<UTCDay>()
        var v1Last: UnixTime?
        if let v1 = configuration.v1 {
            let perKey = stored.map { result in
                let infos = V1Scorer.exposures(for: result.match, configuration: v1, now: now).filter {
                    ExposureResults.isRetained($0.date, today: today)
                }
                // v1 dates an exposure by its key's day; the time is the key's latest sighting.
                for info in infos where info.totalRiskScore > 0 { v1Days.insert(info.date) }
                if infos.contains(where: { $0.totalRiskScore > 0 }), let last = result.match.sightings.map(\.aggregate.firstSeen).max() {
                    v1Last = max(v1Last ?? last, last)
                }
                return infos
            }
            v1Exposures = perKey.flatMap { $0 }
            v1Summary = V1Scorer.summary(perKey)
        }
        let scores = ExposureJudge.score(
            windows, configuration: configuration, today: today, v1: ExposureJudge.V1Exposures(days: v1Days, lastExposure: v1Last))
        return DetectionResult(
            windows: windows, dailySummaries: scores.dailySummaries, v1Summary: v1Summary, v1Exposures: v1Exposures, perDay: scores.perDay,
            verdict: scores.verdict, statistics: statistics, files: files, coronaWarnApp: scores.coronaWarnApp)
    }
}
