// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import Detection
import ENCore
import Foundation
import KeyFiles
import Testing

/// Noon of 2020-04-05, three days after the worked example's key day.
let v1Now = UTCDay(daysSinceEpoch: 18_357).start.adding(seconds: 43_200)

@Suite(.ownThreads) struct WindowAndScoringTests {
    var standard: V2Configuration {
        var configuration = V2Configuration()
        configuration.infectiousnessForDaysSinceOnset = [0: .standard]
        return configuration
    }

    @Test func theWorkedExampleGivesItsWindowsAndScanInstances() {
        let windows = WindowBuilder.windows(for: workedExample, configuration: standard)
        #expect(windows.count == 2)
        #expect(
            windows[0].scanInstances == [
                ScanInstance(typicalAttenuation: 61, minimumAttenuation: 58, secondsSinceLastScan: 300),
                ScanInstance(typicalAttenuation: 68, minimumAttenuation: 68, secondsSinceLastScan: 240),
                ScanInstance(typicalAttenuation: 79, minimumAttenuation: 78, secondsSinceLastScan: 240),
            ])
        #expect(windows[1].scanInstances == [ScanInstance(typicalAttenuation: 53, minimumAttenuation: 53, secondsSinceLastScan: 300)])
        #expect(windows.allSatisfy { $0.day == UTCDay(daysSinceEpoch: 18_354) })
        #expect(windows[0].calibrationConfidence == .low)
        #expect(windows[0].reportType == .confirmedTest)
    }

    @Test func theWorkedExampleDailySummaryReproducesExactly() {
        var configuration = standard
        configuration.attenuationThresholds = [30, 50, 70]
        configuration.bucketWeights = [100, 100, 50, 0]
        let windows = WindowBuilder.windows(for: workedExample, configuration: configuration)
        let summaries = DailySummaryScorer.summaries(windows, configuration: configuration, today: UTCDay(daysSinceEpoch: 18_355))
        #expect(summaries.count == 1)
        let day = summaries[0]
        #expect(day.day == UTCDay(daysSinceEpoch: 18_354))
        #expect(day.total == SummaryData(maximumScore: 270, scoreSum: 420, weightedDurationSum: 420))
        #expect(day.byReportType == [.confirmedTest: SummaryData(maximumScore: 270, scoreSum: 420, weightedDurationSum: 420)])
    }

    @Test func weightsThresholdAndMinimumScoreApply() {
        var configuration = standard
        configuration.attenuationThresholds = [30, 50, 70]
        configuration.bucketWeights = [100, 100, 50, 0]
        configuration.reportTypeWeights[.confirmedTest] = 200
        configuration.infectiousnessStandardWeight = 50
        let windows = WindowBuilder.windows(for: workedExample, configuration: configuration)
        let today = UTCDay(daysSinceEpoch: 18_354)
        #expect(DailySummaryScorer.summaries(windows, configuration: configuration, today: today)[0].total.scoreSum == 420)
        configuration.minimumWindowScore = 200
        #expect(DailySummaryScorer.summaries(windows, configuration: configuration, today: today)[0].total.scoreSum == 270)
        configuration.daysSinceLastExposureThreshold = 2
        #expect(DailySummaryScorer.summaries(windows, configuration: configuration, today: today.advanced(by: 3)).isEmpty)
        #expect(!DailySummaryScorer.summaries(windows, configuration: configuration, today: today.advanced(by: 2)).isEmpty)
    }

    @Test func windowsAreAtMostThirtyMinutes() {
        // A sighting every 4 minutes for two hours: windows cut at 1,800 s from their first sighting.
        let sightings = (0..<30).map { sighting(t0.adding(seconds: Int64($0) * 240), rssi: [-60], previous: t0.adding(seconds: Int64($0) * 240 - 236)) }
        let windows = WindowBuilder.windows(for: KeyMatch(key: diagnosisKey(days: 0), sightings: sightings), configuration: standard)
        #expect(windows.map(\.scanInstances.count) == [8, 8, 8, 6])
    }

    static let mappings: [(ReportType, Int32?, ReportType, Infectiousness)] = [
        (.unknown, 0, .confirmedTest, .standard),  // the configured reportTypeNoneMap
        (.selfReport, 0, .selfReport, .standard),
        (.confirmedTest, 3, .confirmedTest, .none),  // day 3 not in the map
        (.confirmedTest, nil, .confirmedTest, .high),  // missing → the "unknown" value
        (.confirmedTest, 15, .confirmedTest, .high),  // |days| > 14 → the "unknown" value
        (.confirmedTest, -14, .confirmedTest, .standard),
    ]

    @Test(arguments: mappings)
    func reportTypeAndInfectiousnessMapping(type: ReportType, days: Int32?, expectedType: ReportType, expected: Infectiousness) {
        var configuration = V2Configuration()
        configuration.infectiousnessForDaysSinceOnset = [0: .standard, -14: .standard]
        configuration.infectiousnessWhenDaysSinceOnsetMissing = .high
        configuration.reportTypeWhenMissing = .confirmedTest
        let match = KeyMatch(key: diagnosisKey(report: type, days: days), sightings: workedExample.sightings)
        let window = WindowBuilder.windows(for: match, configuration: configuration)[0]
        #expect(window.reportType == expectedType)
        #expect(window.infectiousness == expected)
    }

    @Test func revokedUnmappedAndNoneWindowsDoNotScore() {
        var configuration = standard
        configuration.reportTypeWhenMissing = nil
        let today = UTCDay(daysSinceEpoch: 18_354)
        for key in [diagnosisKey(report: .revoked, days: 0), diagnosisKey(report: .unknown, days: 0), diagnosisKey(days: 5)] {
            let windows = WindowBuilder.windows(for: KeyMatch(key: key, sightings: workedExample.sightings), configuration: configuration)
            #expect(
                DailySummaryScorer.summaries(windows, configuration: configuration, today: today).isEmpty,
                "\(key.reportType) \(String(describing: key.daysSinceOnsetOfSymptoms))")
        }
    }

    @Test func unknownPreviousScanCountsTwoMinutes() {
        let window = WindowBuilder.windows(
            for: KeyMatch(key: diagnosisKey(days: 0), sightings: [sighting(t0, rssi: [-60], previous: nil)]), configuration: standard)[0]
        #expect(window.scanInstances[0].secondsSinceLastScan == 120)
    }

    @Test func v1ProductScoreOfTheWorkedExample() {
        var configuration = V1Configuration()
        configuration.attenuationDurationThresholds = [50, 74]
        let infos = V1Scorer.exposures(for: workedExample, configuration: configuration, now: v1Now)
        // Scans at 0, 240, 480 s form one exposure (gaps ≤ 600 s); the scan at 1,800 s another.
        #expect(infos.count == 2)
        let first = infos[0]
        // Durations: 150+240, 240, 150 → 780 s → rounded to 900 s → 15 minutes.
        #expect(first.durationMinutes == 15)
        // Strongest-RSSI attenuations 58, 68, 78 weighted by 390, 240, 150 s: 65.08 → 65.
        #expect(first.attenuationValue == 65)
        #expect(first.attenuationDurations == [0, 630, 150])
        // Scores: attenuation 65 → bucket 1 (> 63) → 2; 3 days → bucket 6 → 7; 15 min → bucket 3 → 4; TRL 4 → 4.
        #expect(first.totalRiskScore == 2 * 7 * 4 * 4)
        #expect(infos[1].durationMinutes == 5)
        let summary = V1Scorer.summary([infos])
        #expect(summary.matchedKeyCount == 1)
        #expect(summary.daysSinceLastExposure == 3)
        #expect(summary.maximumRiskScore == 224)
        #expect(summary.maximumRiskScoreFullRange == 224)
        #expect(summary.summationRiskScore == 224 + infos[1].totalRiskScore)
        // 630 + 300 s (the second exposure, 53 dB) between the thresholds, 150 s above: 15 and 2 minutes.
        #expect(summary.attenuationDurationsMinutes == [0, 15, 2])

        configuration.formula = .weightedAverage
        configuration.minimumRiskScore = 0
        let averaged = V1Scorer.exposures(for: workedExample, configuration: configuration, now: v1Now)
        #expect(averaged[0].totalRiskScore == 4)  // (2 + 7 + 4 + 4) / 4 = 4.25 → 4
        configuration.formula = .product
        configuration.minimumRiskScore = 300
        #expect(V1Scorer.exposures(for: workedExample, configuration: configuration, now: v1Now)[0].totalRiskScore == 0)
    }

    @Test func swissCovidPerDayCheck() {
        let windows = WindowBuilder.windows(for: workedExample, configuration: standard)
        var configuration = PerDayConfiguration()
        configuration.attenuationThresholds = [55, 63]
        configuration.factorLow = 1
        configuration.factorMedium = 0.5
        configuration.triggerThreshold = 7.5
        // Typical attenuations 61 (300 s, medium), 68 (other), 79 (other), 53 (300 s, low).
        let today = UTCDay(daysSinceEpoch: 18_354)
        let results = PerDayCheck.results(windows, configuration: configuration, today: today)
        #expect(results == [PerDayResult(day: UTCDay(daysSinceEpoch: 18_354), lowMinutes: 5, mediumMinutes: 5, weightedMinutes: 7.5, exposed: true)])
        configuration.triggerThreshold = 7.6
        #expect(PerDayCheck.results(windows, configuration: configuration, today: today)[0].exposed == false)
    }
}
