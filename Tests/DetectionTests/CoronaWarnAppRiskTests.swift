// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import KeyFiles
import Testing

/// Issue 46: Corona-Warn-App's own rule, read as its apps serve it and judged against its own
/// published test cases: cwa-app-android's `exposure-windows-risk-calculation.json` (29 cases)
/// under the Android configuration, cwa-app-ios's copy (28 cases, its earlier weights) under the
/// iOS one, every field each app's test asserts (Fixtures/SOURCES.md).
@Suite struct CoronaWarnAppRiskTests {
    static let today = UTCDay(daysSinceEpoch: 20_000)

    static let androidCases = "cwa-exposure-windows-risk-calculation.json"
    static let iosCases = "cwa-ios-exposure-windows-risk-calculation.json"

    static func fixture(_ name: String = androidCases) throws -> [String: Any] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/windows"))
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// The cases' rule as a served configuration: the test file's parameters and cwa-server's
    /// `max-encounter-age-in-days` (14), with the Android configuration's two messages (cwa-server's
    /// `diagnosis-keys-data-mapping.yaml` and `daily-summaries-config.yaml`) or the iOS one's
    /// exposureConfiguration (the fixture of AuthorityConfigurationTests).
    static func served(_ platform: CoronaWarnAppRiskParameters.Platform, cases: String = androidCases) throws -> Data {
        var rules = try #require(try fixture(cases)["defaultRiskCalculationConfiguration"] as? [String: Any])
        rules["maxEncounterAgeInDays"] = 14
        var root: [String: Any] = ["minVersionCode": 1, "supportedCountries": ["DE"], "riskCalculationParameters": rules]
        switch platform {
        case .android:
            root["diagnosisKeysDataMapping"] = [
                "daysSinceOnsetToInfectiousness": ["1": 1, "2": 2], "infectiousnessWhenDaysSinceOnsetMissing": 0, "reportTypeWhenMissing": 1,
            ]
            root["dailySummariesConfig"] = ["attenuationBucketThresholdDb": [30, 50, 70], "attenuationBucketWeights": [1, 1, 1, 1]]
        case .ios:
            let url = try #require(
                Bundle.module.url(forResource: "cwa-ios-exposure-configuration.json", withExtension: nil, subdirectory: "Fixtures/configurations"))
            root["exposureConfiguration"] = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        }
        return try JSONSerialization.data(withJSONObject: root)
    }

    @Test(arguments: [
        (androidCases, CoronaWarnAppRiskParameters.Platform.android, 29), (iosCases, .ios, 28),
    ])
    func everyPublishedCaseGivesCorinaWarnAppsVerdict(cases file: String, platform: CoronaWarnAppRiskParameters.Platform, count: Int) throws {
        let configuration = try ExposureConfiguration(json: Self.served(platform, cases: file))
        let cases = try #require(try Self.fixture(file)["testCases"] as? [[String: Any]])
        #expect(cases.count == count)
        try Self.judge(cases, under: configuration, platform: platform, encounters: true)
    }

    /// iOS's rule on Android's newer cases gives the same verdict, days and dates; it counts the
    /// low-risk encounters of days that have no risk level as well (cwa-app-ios
    /// `RiskCalculation.swift` counts every day with windows, cwa-app-android only days with a
    /// level), so those counts are not compared.
    @Test func iOSsRuleOnAndroidsCasesGivesTheSameVerdict() throws {
        let configuration = try ExposureConfiguration(json: Self.served(.ios))
        try Self.judge(try #require(try Self.fixture()["testCases"] as? [[String: Any]]), under: configuration, platform: .ios, encounters: false)
    }

    static func judge(_ cases: [[String: Any]], under configuration: ExposureConfiguration, platform: CoronaWarnAppRiskParameters.Platform, encounters: Bool)
        throws
    {
        #expect(configuration.format == .coronaWarnApp)
        guard case .coronaWarnApp(let parameters) = configuration.rule else {
            Issue.record("not CWA's rule: \(configuration.rule)")
            return
        }
        #expect(parameters.platform == platform)
        for (index, testCase) in cases.enumerated() {
            let name = "case \(index): \(testCase["description"] ?? "")"
            let windows = try WindowsFile(json: JSONSerialization.data(withJSONObject: testCase["exposureWindows"] ?? []), today: Self.today).windows
            let scores = ExposureJudge.score(windows, configuration: configuration, today: Self.today)
            let risk = try #require(scores.coronaWarnApp, "\(name)")
            func age(_ day: UTCDay?) -> Int? { day.map { Int(Self.today.daysSinceEpoch - $0.daysSinceEpoch) } }
            func expected(_ key: String) -> Int? { testCase[key] as? Int }
            #expect(risk.totalRiskLevel.rawValue == expected("expTotalRiskLevel"), "\(name)")
            #expect(age(risk.mostRecentDateWithLowRisk) == expected("expAgeOfMostRecentDateWithLowRisk"), "\(name)")
            #expect(age(risk.mostRecentDateWithHighRisk) == expected("expAgeOfMostRecentDateWithHighRisk"), "\(name)")
            #expect(risk.numberOfDaysWithLowRisk == expected("expNumberOfDaysWithLowRisk"), "\(name)")
            #expect(risk.numberOfDaysWithHighRisk == expected("expNumberOfDaysWithHighRisk"), "\(name)")
            if encounters {
                #expect(risk.totalMinimumDistinctEncountersWithLowRisk == expected("expTotalMinimumDistinctEncountersWithLowRisk"), "\(name)")
                #expect(risk.totalMinimumDistinctEncountersWithHighRisk == expected("expTotalMinimumDistinctEncountersWithHighRisk"), "\(name)")
            }
            // gaend's answer is CWA's red card: the days of high risk.
            #expect(scores.verdict.dayList == risk.highRiskDays, "\(name)")
            #expect(scores.verdict.exposed == (risk.totalRiskLevel == .high), "\(name)")
        }
    }

    /// Where the apps differ: Android rounds the day's normalized time to 0.1 before looking up its
    /// level, iOS does not; Android's filter counts minutes as a fraction, iOS's whole minutes.
    @Test func theAppsDifferOnlyWhereTheirCodeDoes() {
        var parameters = CoronaWarnAppRiskParameters()
        parameters.minutesAtAttenuationWeights = [.init(attenuation: .init(min: 0, max: 80), weight: 1)]
        parameters.transmissionRiskValues = [.init(level: 1, value: 1)]
        parameters.trlEncoding.infectiousnessOffsetStandard = 1
        parameters.normalizedTimePerWindowToRiskLevel = [.init(normalizedTime: .init(min: 0, max: 100), riskLevel: .low)]
        parameters.normalizedTimePerDayToRiskLevel = [
            .init(normalizedTime: .init(min: 0, max: 9, maxExclusive: true), riskLevel: .low),
            .init(normalizedTime: .init(min: 9, max: 100), riskLevel: .high),
        ]
        // 538 s: 8.9667 minutes, which Android rounds to 9.0 (high) and iOS keeps (low).
        let window = ExposureWindow(
            day: Self.today, reportType: .recursive, infectiousness: .standard, calibrationConfidence: .high, transmissionRiskLevel: 0,
            scanInstances: [ScanInstance(typicalAttenuation: 60, minimumAttenuation: 60, secondsSinceLastScan: 538)])
        parameters.platform = .android
        #expect(CoronaWarnAppRisk.evaluate([window], parameters: parameters, today: Self.today).totalRiskLevel == .high)
        parameters.platform = .ios
        #expect(CoronaWarnAppRisk.evaluate([window], parameters: parameters, today: Self.today).totalRiskLevel == .low)
        // A filter dropping windows with under 9 minutes at 0...80 dB: 8.97 minutes is under 9 on
        // Android and 8 whole minutes on iOS; 9 minutes 30 s is 9.5 on Android, 9 on iOS.
        parameters.minutesAtAttenuationFilters = [
            .init(attenuation: .init(min: 0, max: 80), dropIfMinutes: .init(min: 0, max: 9, maxExclusive: true))
        ]
        var longer = window
        longer.scanInstances[0].secondsSinceLastScan = 570
        for platform in [CoronaWarnAppRiskParameters.Platform.android, .ios] {
            parameters.platform = platform
            #expect(CoronaWarnAppRisk.evaluate([window], parameters: parameters, today: Self.today).days.isEmpty)
            #expect(CoronaWarnAppRisk.evaluate([longer], parameters: parameters, today: Self.today).days.count == 1)
        }
        // Windows older than maxEncounterAgeInDays are dropped before anything else.
        parameters.maxEncounterAgeInDays = 3
        var old = window
        old.day = Self.today.advanced(by: -4)
        #expect(CoronaWarnAppRisk.evaluate([old], parameters: parameters, today: Self.today).days.isEmpty)
    }

    /// The served configuration is read strictly: a misspelt key of the rule, a missing age, a
    /// rule without the section that makes its windows, and CWA 1.x's rule are refused by name.
    @Test func whatCannotBeJudgedAsServedIsRefusedByName() throws {
        let android = try #require(try JSONSerialization.jsonObject(with: Self.served(.android)) as? [String: Any])
        func refusal(_ change: (inout [String: Any]) -> Void) -> String? {
            var root = android
            change(&root)
            do {
                _ = try ExposureConfiguration(json: JSONSerialization.data(withJSONObject: root))
                return nil
            } catch {
                return "\(error)"
            }
        }
        func rules(_ change: @escaping (inout [String: Any]) -> Void) -> (inout [String: Any]) -> Void {
            { root in
                var rules = root["riskCalculationParameters"] as! [String: Any]
                change(&rules)
                root["riskCalculationParameters"] = rules
            }
        }
        #expect(refusal { _ in } == nil)
        #expect(
            refusal(rules { $0["minutesAtAttenuationWeight"] = [] })
                == "riskCalculationParameters.minutesAtAttenuationWeight: not a key of Corona-Warn-App's riskCalculationParameters")
        #expect(
            refusal(rules { $0.removeValue(forKey: "maxEncounterAgeInDays") })
                == "riskCalculationParameters.maxEncounterAgeInDays: missing: Corona-Warn-App drops every window older than it")
        #expect(
            refusal(rules { $0["trlEncoding"] = ["infectiousnessOffsetStandard": 1, "infectiousnesOffsetHigh": 2] })
                == "riskCalculationParameters.trlEncoding.infectiousnesOffsetHigh: not a key of Corona-Warn-App's trlEncoding")
        #expect(
            refusal(rules { $0["normalizedTimePerDayToRiskLevelMapping"] = [["normalizedTimeRange": ["min": 9], "riskLevel": "SEVERE"]] })
                == "riskCalculationParameters.normalizedTimePerDayToRiskLevelMapping[0].riskLevel: SEVERE is not UNSPECIFIED, LOW or HIGH (0, 1 or 2)")
        #expect(
            refusal(rules { $0["minutesAtAttenuationWeights"] = [["attenuationRange": ["min": 0, "max": true], "weight": 1]] })
                == "riskCalculationParameters.minutesAtAttenuationWeights[0].attenuationRange.max: 1 is not a number")
        #expect(
            refusal {
                $0.removeValue(forKey: "diagnosisKeysDataMapping")
                $0.removeValue(forKey: "dailySummariesConfig")
            }?.hasPrefix("riskCalculationParameters: served without diagnosisKeysDataMapping (Android) or exposureConfiguration (iOS)") == true)
        // CWA 1.x's rule beside a section gaend reads: refused, never judged by the other section.
        #expect(
            refusal {
                $0.removeValue(forKey: "riskCalculationParameters")
                $0["riskScoreClasses"] = ["riskClasses": []]
            } == "riskScoreClasses: Corona-Warn-App 1.x's risk score classes, which gaend does not implement: refused rather than judged by another section")
        // An unknown rule section beside an app shape that passes over the app's own keys.
        let swiss =
            #"{"androidGaenSdkConfig": {"lowerThreshold": 55, "higherThreshold": 63, "factorLow": 1, "factorHigh": 0.5, "triggerThreshold": 15}, "riskModel": {}}"#
        #expect(
            throws: ConfigurationError(
                key: "riskModel", problem: "a rule section of an unknown shape, which gaend does not implement: refused rather than judged by another section")
        ) {
            try ExposureConfiguration(json: Data(swiss.utf8))
        }
    }
}
