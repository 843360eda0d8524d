// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// ENX's classification, ported from google/exposure-notifications-android
/// `riskcalculation/DailySummaryRiskCalculatorTest.java` with its thresholds
/// (`testsupport/HAConfigObjects.java`): each case's daily summaries and expected (index, name, date).
@Suite(.ownThreads) struct ENXClassificationTests {
    static let today = UTCDay(daysSinceEpoch: 20_000)
    static let short = SummaryData(maximumScore: 2699, scoreSum: 2699, weightedDurationSum: 2699)
    static let long = SummaryData(maximumScore: 2700, scoreSum: 2700, weightedDurationSum: 2700)

    /// HAConfigObjects.CLASSIFICATION_THRESHOLDS_ARRAY.
    static let thresholds = [
        ClassificationThresholds(index: 1, name: "Classification 1", scoreSumByReportType: [.confirmedTest: 2700]),
        ClassificationThresholds(index: 2, name: "Classification 2", scoreSumByReportType: [.confirmedTest: 1]),
        ClassificationThresholds(index: 3, name: "Classification 3", scoreSumByReportType: [.confirmedClinicalDiagnosis: 2700]),
        ClassificationThresholds(index: 4, name: "Classification 4", scoreSumByReportType: [.confirmedClinicalDiagnosis: 1]),
    ]

    static func day(_ offset: Int64, _ byType: [ReportTypeKey: SummaryData], total: SummaryData) -> DailySummary {
        DailySummary(day: today.advanced(by: offset), total: total, byReportType: byType)
    }

    /// ENX's answer: the most severe classification and the latest day it was reached, or (0, "No
    /// Exposure", 0) as ENX writes none.
    static func classify(_ summaries: [DailySummary], _ thresholds: [ClassificationThresholds] = thresholds) -> (Int, String, UTCDay?) {
        let verdict = ExposureVerdict(days: ExposureJudge.exposureDays(summaries, rule: .classifications(thresholds)))
        guard let (classification, day) = verdict.classification else { return (0, "No Exposure", nil) }
        return (classification.index, classification.name, day)
    }

    @Test func theCasesOfDailySummaryRiskCalculatorTest() {
        let t = Self.today
        #expect(Self.classify([]) == (0, "No Exposure", nil))
        // Self reports and recursive keys are not classified by these thresholds.
        #expect(Self.classify([Self.day(0, [.selfReport: Self.long], total: Self.long)]) == (0, "No Exposure", nil))
        #expect(Self.classify([Self.day(0, [.recursive: Self.long], total: Self.long)]) == (0, "No Exposure", nil))
        #expect(Self.classify([Self.day(0, [.confirmedTest: Self.long], total: Self.long)]) == (1, "Classification 1", t))
        #expect(Self.classify([Self.day(0, [.confirmedTest: Self.short], total: Self.short)]) == (2, "Classification 2", t))
        #expect(Self.classify([Self.day(0, [.confirmedClinicalDiagnosis: Self.long], total: Self.long)]) == (3, "Classification 3", t))
        #expect(Self.classify([Self.day(0, [.confirmedClinicalDiagnosis: Self.short], total: Self.short)]) == (4, "Classification 4", t))
        let three = SummaryData(maximumScore: 3000, scoreSum: 3000, weightedDurationSum: 3000)
        let sum = SummaryData(maximumScore: 3000, scoreSum: 6000, weightedDurationSum: 6000)
        #expect(
            Self.classify([Self.day(0, [.confirmedTest: three, .confirmedClinicalDiagnosis: three], total: sum)]) == (1, "Classification 1", t))
        // Several days: the most severe classification, dated by the latest day that reached it.
        let half = SummaryData(maximumScore: 1500, scoreSum: 1500, weightedDurationSum: 1500)
        let days = [
            Self.day(-14, [.confirmedTest: three, .confirmedClinicalDiagnosis: three], total: sum),
            Self.day(-2, [.confirmedTest: three], total: three),
            Self.day(-1, [.confirmedClinicalDiagnosis: half], total: half),
            Self.day(0, [.confirmedTest: half], total: half),
        ]
        #expect(Self.classify(days) == (1, "Classification 1", t.advanced(by: -2)))
    }

    /// The single-threshold cases: each of the other kinds of threshold alone, at 2700.
    @Test func eachKindOfThresholdClassifiesAlone() {
        let t = Self.today
        func only(_ build: (inout ClassificationThresholds) -> Void) -> [ClassificationThresholds] {
            var threshold = ClassificationThresholds(index: 1, name: "Classification 1")
            build(&threshold)
            return [threshold]
        }
        let expected = (1, "Classification 1", Optional(t))
        #expect(Self.classify([Self.day(0, [.selfReport: Self.long], total: Self.long)], only { $0.scoreSumByReportType[.selfReport] = 2700 }) == expected)
        #expect(Self.classify([Self.day(0, [.recursive: Self.long], total: Self.long)], only { $0.scoreSumByReportType[.recursive] = 2700 }) == expected)
        #expect(Self.classify([Self.day(0, [.confirmedTest: Self.long], total: Self.long)], only { $0.scoreSum = 2700 }) == expected)
        #expect(Self.classify([Self.day(0, [.confirmedTest: Self.long], total: Self.long)], only { $0.maximumScore = 2700 }) == expected)
        #expect(
            Self.classify([Self.day(0, [.confirmedClinicalDiagnosis: Self.long], total: Self.long)], only { $0.weightedDuration = 2700 }) == expected)
        // One second under each: none.
        #expect(Self.classify([Self.day(0, [.confirmedTest: Self.short], total: Self.short)], only { $0.scoreSum = 2700 }) == (0, "No Exposure", nil))
    }

    /// The same inputs under the ENX sample's own thresholds (C3 clinical ≥ 1, C4 self report ≥ 1):
    /// a self report is classification 4 there, and a short clinical diagnosis 3.
    @Test func theENXSamplesThresholdsClassifyWhatItsTestsDoNot() throws {
        guard case .classifications(let sample) = try configurationFixture("enx-sample.json").rule else {
            Issue.record("not classifications")
            return
        }
        let t = Self.today
        #expect(Self.classify([Self.day(0, [.selfReport: Self.long], total: Self.long)], sample) == (4, "Classification 4", t))
        #expect(Self.classify([Self.day(0, [.confirmedClinicalDiagnosis: Self.short], total: Self.short)], sample) == (3, "Classification 3", t))
        #expect(Self.classify([Self.day(0, [.recursive: Self.long], total: Self.long)], sample) == (0, "No Exposure", nil))
    }
}

/// SwissCovid's per-day rule with DP-3T v2's semantics, ported from dp3t-sdk-android
/// `ExposureNotifactionThresholdTest` and `SyncWorkerTest`, and dp3t-sdk-ios `AttenuationValuesTests`,
/// `ExposureWindowTests` and `ExposureNotificationMatcherTests`.
@Suite(.ownThreads) struct SwissCovidRuleTests {
    static let today = UTCDay(daysSinceEpoch: 20_000)

    /// A window of `day` whose instances put `seconds` in the low (50 dB), medium (60 dB) and
    /// ignored (70 dB) buckets of the default 55/63 thresholds.
    static func window(low: Int = 0, medium: Int = 0, high: Int = 0, day: UTCDay = today, matched: UTCDay? = nil) -> ExposureWindow {
        let instances = [(50, low), (60, medium), (70, high)].filter { $0.1 > 0 }.map {
            ScanInstance(typicalAttenuation: $0.0, minimumAttenuation: $0.0, secondsSinceLastScan: $0.1)
        }
        return ExposureWindow(
            day: day, start: day.start.adding(seconds: 3600), matchedAt: (matched ?? today).start.adding(seconds: 7200), reportType: .confirmedTest,
            infectiousness: .standard, calibrationConfidence: .medium, transmissionRiskLevel: 0, scanInstances: instances)
    }

    static func perDay(factorLow: Double = 1, factorMedium: Double = 0.5, trigger: Double = 15, thresholds: [Int] = [55, 63]) -> ExposureConfiguration {
        var configuration = PerDayConfiguration()
        configuration.factorLow = factorLow
        configuration.factorMedium = factorMedium
        configuration.triggerThreshold = trigger
        configuration.attenuationThresholds = thresholds
        return ExposureConfiguration(rule: .perDayDuration(configuration), format: .swissCovid)
    }

    static func exposed(_ windows: [ExposureWindow], _ configuration: ExposureConfiguration = perDay()) -> Bool {
        ExposureJudge.score(windows, configuration: configuration, today: today).verdict.exposed
    }

    /// Android `testDefault` and `testChangedConfiguration` (minutes in; the third bucket ignored).
    @Test func theThresholdCasesInMinutes() {
        for (low, medium, high, expected) in [
            (15, 0, 0, true), (10, 10, 0, true), (0, 30, 0, true), (30, 30, 30, true), (14, 1, 0, false), (5, 19, 0, false), (0, 29, 30, false),
        ] {
            #expect(Self.exposed([Self.window(low: low * 60, medium: medium * 60, high: high * 60)]) == expected, "\(low) \(medium) \(high)")
        }
        let changed = Self.perDay(factorLow: 0.5, factorMedium: 2, trigger: 10)
        for (low, medium, high, expected) in [
            (20, 0, 0, true), (10, 3, 0, true), (0, 30, 0, true), (30, 0, 0, true), (30, 30, 30, true), (1, 4, 0, false), (15, 1, 0, false), (19, 0, 30, false),
        ] {
            #expect(Self.exposed([Self.window(low: low * 60, medium: medium * 60, high: high * 60)], changed) == expected, "\(low) \(medium) \(high)")
        }
    }

    /// Android `testDefaultWithSeconds` and iOS `testRoundingMinutesUp`: each bucket's seconds of a
    /// day are rounded up to whole minutes (truncating would fail the first, third and last).
    @Test func secondsAreRoundedUpToMinutesPerBucketAndDay() {
        for (low, medium, high, expected) in [
            (841, 0, 0, true), (600, 600, 0, true), (0, 1741, 0, true), (1800, 1800, 1800, true), (840, 1, 0, false), (300, 1140, 0, false),
            (0, 1740, 1800, false),
        ] {
            #expect(Self.exposed([Self.window(low: low, medium: medium, high: high)]) == expected, "\(low) \(medium) \(high)")
        }
        #expect(Self.exposed([Self.window(low: 59)], Self.perDay(factorLow: 1, factorMedium: 0, trigger: 1)))
        let minutes = ExposureJudge.score([Self.window(low: 841, medium: 1741)], configuration: Self.perDay(), today: Self.today).perDay
        #expect(minutes.map(\.lowMinutes) == [15] && minutes.map(\.mediumMinutes) == [30])
    }

    /// iOS `testMatching`: 2 minutes in each bucket under five factor settings.
    @Test func theFactorCases() {
        for (factorLow, factorHigh, trigger, expected) in [(0.0, 1.0, 2.0, true), (1, 0, 2, true), (0, 0, 1, false), (0, 0.5, 2, false), (0.5, 0, 2, false)] {
            #expect(
                Self.exposed([Self.window(low: 120, medium: 120)], Self.perDay(factorLow: factorLow, factorMedium: factorHigh, trigger: trigger)) == expected)
        }
    }

    /// iOS `testDayGroupingSingle` and `testComputingSeconds`: a day's windows are summed before
    /// rounding, and the edges are `<`.
    @Test func aDaysWindowsAreSummedFirst() {
        let windows = [10, 20, 30, 40].map { Self.window(low: $0) }
        let result = ExposureJudge.score(windows, configuration: Self.perDay(), today: Self.today).perDay
        #expect(result.map(\.lowMinutes) == [2])  // 100 s, not 4 × 1 minute
        let scan = [(20, 22), (30, 55), (40, 77)].map { ScanInstance(typicalAttenuation: $0.0, minimumAttenuation: $0.0, secondsSinceLastScan: $0.1) }
        var window = Self.window(low: 1)
        window.scanInstances = scan
        let split = ExposureJudge.score([window], configuration: Self.perDay(thresholds: [25, 45]), today: Self.today).perDay
        #expect(split.map(\.lowMinutes) == [1] && split.map(\.mediumMinutes) == [3])  // 22 s and 132 s
        var edge = Self.window(low: 1)
        edge.scanInstances = [ScanInstance(typicalAttenuation: 55, minimumAttenuation: 55, secondsSinceLastScan: 900)]
        #expect(ExposureJudge.score([edge], configuration: Self.perDay(), today: Self.today).perDay.map(\.mediumMinutes) == [15])
    }

    /// iOS `ExposureNotificationMatcherTests` and Android `SyncWorkerTest`: whole windows, no cap on
    /// a bucket (33 minutes count 33), and only the last 10 days, today included, at the time the
    /// windows were matched.
    @Test func windowsOfTheLastTenDaysAtTheirMatch() {
        #expect(Self.exposed([Self.window(low: 6 * 180, medium: 6 * 180)]))
        #expect(Self.exposed([Self.window(low: 6 * 180)]))
        #expect(Self.exposed([Self.window(medium: 11 * 180)]))  // 33 min × 0.5 = 16.5
        #expect(!Self.exposed([Self.window(low: 5 * 120, medium: 4 * 120)]))  // 10 + 4 = 14
        #expect(Self.exposed([Self.window(low: 1200, day: Self.today.advanced(by: -1))]))
        #expect(!Self.exposed([Self.window(low: 1080, day: Self.today.advanced(by: -10))]))
        #expect(!Self.exposed([Self.window(low: 1200, day: Self.today.advanced(by: -12))]))
        #expect(Self.exposed([Self.window(low: 1200, day: Self.today.advanced(by: -9))]))
        // A day found when it was 8 days old stays an exposure when it is 12 days old.
        let early = Self.window(low: 1200, day: Self.today.advanced(by: -12), matched: Self.today.advanced(by: -4))
        #expect(Self.exposed([early]))
    }

    /// The v1 frameworks capped each attenuation duration at 30 minutes; the cap holds only there.
    @Test func theThirtyMinuteCapIsV1s() throws {
        let v1 = try ExposureConfiguration(json: Data(#"{"minimumRiskScore": 0, "factorLow": 1, "factorMedium": 0.5, "triggerThreshold": 40}"#.utf8))
        #expect(v1.perDay?.minutesCap == 30)
        let result = ExposureJudge.score([Self.window(low: 45 * 60)], configuration: ExposureConfiguration(rule: v1.rule), today: Self.today)
        #expect(result.perDay.map(\.lowMinutes) == [30])
        #expect(!result.verdict.exposed)
        #expect(Self.exposed([Self.window(low: 45 * 60)], Self.perDay(trigger: 40)))
    }

    /// A trigger of 0 does not make an exposure of a day without a minute in the buckets.
    @Test func noMinuteIsNoExposure() {
        #expect(!Self.exposed([Self.window(high: 3600)], Self.perDay(trigger: 0)))
    }
}

/// The verdict under the other rules, and the one definition of "exposed".
@Suite(.ownThreads) struct VerdictRuleTests {
    static let today = UTCDay(daysSinceEpoch: 20_000)

    static func window(_ attenuation: Int, seconds: Int, type: ReportType = .confirmedTest, day: UTCDay = today) -> ExposureWindow {
        ExposureWindow(
            day: day, start: day.start.adding(seconds: 3600), reportType: type, infectiousness: .standard, calibrationConfidence: .medium,
            transmissionRiskLevel: 0,
            scanInstances: [ScanInstance(typicalAttenuation: attenuation, minimumAttenuation: attenuation, secondsSinceLastScan: seconds)])
    }

    /// A window whose time is all in a 0-weight bucket scores 0 and is no exposure, with
    /// minimumWindowScore 0 as gaend's, ENX's, CWA's and Google's defaults have it.
    @Test func aWindowScoringZeroIsNoExposure() throws {
        var v2 = V2Configuration()
        v2.bucketWeights = [100, 100, 50, 0]
        let configuration = ExposureConfiguration(v2: v2)
        let far = ExposureJudge.score([Self.window(95, seconds: 1800)], configuration: configuration, today: Self.today)
        #expect(far.dailySummaries.map(\.total.scoreSum) == [0])
        #expect(!far.verdict.exposed)
        #expect(far.verdict.lastExposure == nil)
        // A 0 report-type weight too.
        v2.reportTypeWeights[.selfReport] = 0
        let selfReport = ExposureJudge.score(
            [Self.window(40, seconds: 1800, type: .selfReport)], configuration: ExposureConfiguration(v2: v2), today: Self.today)
        #expect(!selfReport.verdict.exposed)
        let near = ExposureJudge.score([Self.window(40, seconds: 300), Self.window(95, seconds: 1800)], configuration: configuration, today: Self.today)
        #expect(near.verdict.dayList == [Self.today])
        #expect(near.verdict.lastExposure == Self.today.start.adding(seconds: 3600))
    }

    /// Koronavilkku: the day's scoreSum, rounded as its Android app rounds it, against 900.
    @Test func koronavilkkusDailyMinimum() {
        let rule = ExposureRule.minimumDailyScore(900)
        func days(_ sum: Double) -> Int {
            ExposureJudge.exposureDays(
                [DailySummary(day: Self.today, total: SummaryData(maximumScore: sum, scoreSum: sum, weightedDurationSum: sum))], rule: rule
            )
            .count
        }
        #expect(days(900) == 1)
        #expect(days(899.5) == 1)
        #expect(days(899.4) == 0)
        #expect(ExposureJudge.exposureDays([], rule: .minimumDailyScore(0)).isEmpty)
        #expect(ExposureJudge.exposureDays([DailySummary(day: Self.today, total: SummaryData())], rule: .minimumDailyScore(0)).isEmpty)
    }

    /// Koronavilkku's served configuration end to end: 14 minutes near is no exposure, 16 is.
    @Test func koronavilkkusConfigurationDecides() throws {
        let configuration = try configurationFixture("koronavilkku-v2.json")
        // 60 dB is the near bucket (weight 1.0), a confirmed test (1.0), standard (1.0): seconds.
        #expect(!ExposureJudge.score([Self.window(60, seconds: 14 * 60)], configuration: configuration, today: Self.today).verdict.exposed)
        #expect(ExposureJudge.score([Self.window(60, seconds: 16 * 60)], configuration: configuration, today: Self.today).verdict.exposed)
        // A clinical diagnosis weighs 0 in Finland: never an exposure.
        #expect(
            !ExposureJudge.score([Self.window(40, seconds: 3600, type: .confirmedClinicalDiagnosis)], configuration: configuration, today: Self.today).verdict
                .exposed)
    }

    /// The ENX sample end to end: 45 weighted minutes of a confirmed test are classification 1.
    @Test func theENXSampleClassifiesWindows() throws {
        let configuration = try configurationFixture("enx-sample.json")
        // 40 dB is near (1.0): 45 minutes = 2700.
        let long = ExposureJudge.score([Self.window(40, seconds: 2700)], configuration: configuration, today: Self.today)
        #expect(long.verdict.days == [ExposureDay(day: Self.today, classification: Classification(index: 1, name: "Classification 1"))])
        let short = ExposureJudge.score([Self.window(40, seconds: 600)], configuration: configuration, today: Self.today)
        #expect(short.verdict.classification?.0 == Classification(index: 2, name: "Classification 2"))
        // Other (beyond 60 dB) weighs 0: no classification, no exposure.
        #expect(!ExposureJudge.score([Self.window(70, seconds: 3600)], configuration: configuration, today: Self.today).verdict.exposed)
    }
}
