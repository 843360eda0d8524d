// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import Foundation
import GaendTestSupport
import Testing

/// A configuration fixture of a real authority (Fixtures/SOURCES.md), read as it is.
func configurationFixture(_ name: String) throws -> ExposureConfiguration {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/configurations"), "fixture \(name)")
    return try ExposureConfiguration(json: Data(contentsOf: url))
}

/// The configurations real authorities published parse as they are, each in its own shape, with the
/// values their own apps handed the framework (docs/detection.md, "Configuration").
@Suite(.ownThreads) struct AuthorityConfigurationTests {
    /// ENX `app/configs/sample.json`, as `RiskCalculationModule` and `ClassificationThreshold` read it.
    @Test func theENXSampleReadsWithItsFourClassifications() throws {
        let configuration = try configurationFixture("enx-sample.json")
        #expect(configuration.format == .enx)
        let v2 = try #require(configuration.v2)
        #expect(v2.attenuationThresholds == [30, 50, 60])
        #expect(v2.bucketWeights == [150, 100, 50, 0])
        #expect(v2.reportTypeWeights == [.confirmedTest: 100, .confirmedClinicalDiagnosis: 100, .selfReport: 100, .recursive: 0])
        #expect(v2.infectiousnessStandardWeight == 100 && v2.infectiousnessHighWeight == 100)
        // "0x0555555555555555": every day and the missing value standard.
        #expect(v2.infectiousnessForDaysSinceOnset == V2Configuration.everyDayStandard)
        #expect(v2.infectiousnessWhenDaysSinceOnsetMissing == .standard)
        #expect(v2.reportTypeWhenMissing == .confirmedClinicalDiagnosis)
        #expect(v2.daysSinceLastExposureThreshold == 14)
        #expect(v2.minimumWindowScore == 0)
        guard case .classifications(let classifications) = configuration.rule else {
            Issue.record("rule \(configuration.rule)")
            return
        }
        #expect(classifications.map(\.index) == [1, 2, 3, 4])
        #expect(classifications.map(\.name) == ["Classification 1", "Classification 2", "Classification 3", "Classification 4"])
        #expect(
            classifications.map(\.scoreSumByReportType) == [
                [.confirmedTest: 2700, .confirmedClinicalDiagnosis: 0, .selfReport: 0, .recursive: 0],
                [.confirmedTest: 1, .confirmedClinicalDiagnosis: 0, .selfReport: 0, .recursive: 0],
                [.confirmedTest: 0, .confirmedClinicalDiagnosis: 1, .selfReport: 0, .recursive: 0],
                [.confirmedTest: 0, .confirmedClinicalDiagnosis: 0, .selfReport: 1, .recursive: 0],
            ])
        #expect(classifications.allSatisfy { $0.scoreSum == 0 && $0.maximumScore == 0 && $0.weightedDuration == 0 })
    }

    /// Koronavilkku's `GET /exposure/configuration/v2` example: Google's names and 0…2.5 weights.
    @Test func koronavilkkusServedConfigurationReadsWithItsDailyMinimum() throws {
        let configuration = try configurationFixture("koronavilkku-v2.json")
        #expect(configuration.format == .googleDailySummaries)
        #expect(configuration.rule == .minimumDailyScore(900))
        let v2 = try #require(configuration.v2)
        #expect(v2.attenuationThresholds == [55, 70, 80])
        #expect(v2.bucketWeights == [200, 100, 25, 0])
        #expect(v2.reportTypeWeights == [.confirmedTest: 100, .confirmedClinicalDiagnosis: 0, .selfReport: 0, .recursive: 0])
        #expect(v2.infectiousnessStandardWeight == 100 && v2.infectiousnessHighWeight == 150)
        #expect(v2.daysSinceLastExposureThreshold == 10)
        #expect(v2.minimumWindowScore == 1)
        #expect(v2.infectiousnessForDaysSinceOnset[-3] == Infectiousness.none)
        #expect(v2.infectiousnessForDaysSinceOnset[-2] == .standard)
        #expect(v2.infectiousnessForDaysSinceOnset[0] == .high)
        #expect(v2.infectiousnessForDaysSinceOnset[10] == .standard)
        #expect(v2.infectiousnessForDaysSinceOnset[11] == Infectiousness.none)
        #expect(v2.infectiousnessWhenDaysSinceOnsetMissing == .standard)
        #expect(v2.reportTypeWhenMissing == .confirmedTest)
    }

    /// The Netherlands' v1 `RiskCalcDefaults.json`, UTF-8 BOM and all.
    @Test func theDutchV1DefaultsRead() throws {
        let configuration = try configurationFixture("nl-RiskCalcDefaults.json")
        #expect(configuration.format == .googleV1)
        #expect(configuration.isV1Only)
        #expect(configuration.rule == .v1RiskScore)
        let v1 = try #require(configuration.v1)
        #expect(v1.minimumRiskScore == 6)
        #expect(v1.attenuationDurationThresholds == [63, 73])
        #expect(v1.attenuationScores == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(v1.daysSinceLastExposureScores == [1, 1, 1, 1, 1, 1, 1, 1])
        #expect(v1.durationScores == [0, 0, 0, 1, 2, 2, 2, 2])
        #expect(v1.transmissionRiskScores == [0, 2, 2, 2, 0, 0, 0, 0])
    }

    /// SwissCovid's `GAENSDKConfig`, alone and inside the app configuration that serves it.
    @Test func swissCovidsConfigurationReadsAloneAndInItsAnswer() throws {
        let served = try configurationFixture("swisscovid-gaensdkconfig.json")
        #expect(served.format == .swissCovid)
        var expected = PerDayConfiguration()
        expected.attenuationThresholds = [55, 63]
        #expect(served.rule == .perDayDuration(expected))
        #expect(served.v2 == nil && served.v1 == nil)

        let answer = try configurationFixture("swisscovid-app-ios-config-response.json")
        expected.attenuationThresholds = [53, 60]
        #expect(answer.rule == .perDayDuration(expected))
    }

    /// Corona-Warn-App's iOS ExposureConfiguration, in proto3 JSON: Apple's names.
    @Test func corinaWarnAppsIOSConfigurationReads() throws {
        let configuration = try configurationFixture("cwa-ios-exposure-configuration.json")
        #expect(configuration.format == .apple)
        let v2 = try #require(configuration.v2)
        #expect(v2.attenuationThresholds == [30, 50, 70])
        #expect(v2.bucketWeights == [1, 1, 1, 1])
        #expect(v2.reportTypeWhenMissing == nil)
        // CWA hides its transmission risk level in the days since onset: only 1 and 2 are mapped.
        #expect(v2.infectiousnessForDaysSinceOnset == [1: .standard, 2: .high])
        #expect(configuration.rule == .scoreAboveZero)
    }

    /// Corona-Warn-App's Android configuration carries Google's two messages apart, in proto3 JSON
    /// (cwa-app-android `app_config_android.proto`), with the values of cwa-server's
    /// `main-config/v2/daily-summaries-config.yaml` and `diagnosis-keys-data-mapping.yaml`.
    @Test func corinaWarnAppsAndroidMessagesRead() throws {
        let json = #"""
            {"minVersionCode": 1, "dailySummariesConfig": {"attenuationBucketThresholdDb": [30, 50, 70], "attenuationBucketWeights": [1, 1, 1, 1],
               "daysSinceExposureThreshold": 0, "infectiousnessWeights": {"1": 1.0, "2": 1.0},
               "reportTypeWeights": {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0}, "minimumWindowScore": 0},
             "diagnosisKeysDataMapping": {"daysSinceOnsetToInfectiousness": {"1": 1, "2": 2}, "infectiousnessWhenDaysSinceOnsetMissing": 0,
               "reportTypeWhenMissing": 1}}
            """#
        let configuration = try ExposureConfiguration(json: Data(json.utf8))
        #expect(configuration.format == .googleDailySummaries)
        let v2 = try #require(configuration.v2)
        #expect(v2.attenuationThresholds == [30, 50, 70] && v2.bucketWeights == [100, 100, 100, 100])
        #expect(v2.reportTypeWeights == [.confirmedTest: 100, .confirmedClinicalDiagnosis: 100, .selfReport: 100, .recursive: 100])
        #expect(v2.infectiousnessStandardWeight == 100 && v2.infectiousnessHighWeight == 100)
        #expect(v2.infectiousnessForDaysSinceOnset == [1: .standard, 2: .high])
        #expect(v2.infectiousnessWhenDaysSinceOnsetMissing == Infectiousness.none)
        #expect(v2.reportTypeWhenMissing == .confirmedTest)
        #expect(configuration.rule == .scoreAboveZero)
        #expect(throws: ConfigurationError(key: #"reportTypeWeights["5"]"#, problem: "not one of the API's numbers 1...4")) {
            try ExposureConfiguration(
                json: Data(
                    #"{"dailySummariesConfig": {"attenuationBucketThresholdDb": [30, 50, 70], "attenuationBucketWeights": [1, 1, 1, 1], "reportTypeWeights": {"5": 1}}}"#
                        .utf8))
        }
    }

    /// ENX's hex map, as `DiagnosisKeyDataMappingHelperTest` checks it (days −14…14, then the value
    /// for a missing onset).
    static let mappings: [(String, [Int], Int)] = [
        ("0x0000000000000000", Array(repeating: 0, count: 29), 0),
        ("0x0aaaaaaaaaaaaaaa", Array(repeating: 2, count: 29), 2),
        ("0x0104555aa6100000", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1], 0),
        ("0x0492492492492492", [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0], 1),
        ("0x0", Array(repeating: 0, count: 29), 0),
    ]

    static func enx(_ extra: String) -> Data {
        Data(
            """
            {"config": {"attenuationImmediateWeight": 150, "attenuationNearWeight": 100, "attenuationMedWeight": 50,
             "attenuationOtherWeight": 0, "attenuationImmediateNearThreshold": 30, "attenuationNearMedThreshold": 50,
             "attenuationMedFarThreshold": 60, "appTitle_EN_US": "Sample"\(extra)}}
            """.utf8)
    }

    @Test(arguments: mappings)
    func enxsInfectiousnessMapDecodesAsENXDoes(map: String, days: [Int], missing: Int) throws {
        let v2 = try #require(try ExposureConfiguration(json: Self.enx(#", "symptomOnsetToInfectiousnessMap": "\#(map)""#)).v2)
        #expect((-14...14).map { v2.infectiousnessForDaysSinceOnset[$0]?.rawValue } == days)
        #expect(v2.infectiousnessWhenDaysSinceOnsetMissing.rawValue == missing)
    }

    /// ENX pads a short map with zeros on the left: the two strings are one mapping.
    @Test func aShortENXMapIsPaddedOnTheLeft() throws {
        let short = try ExposureConfiguration(json: Self.enx(#", "symptomOnsetToInfectiousnessMap": "0x556aaa900000""#))
        let long = try ExposureConfiguration(json: Self.enx(#", "symptomOnsetToInfectiousnessMap": "0x0000556aaa900000""#))
        #expect(short.v2 == long.v2)
        #expect(short.v2?.infectiousnessForDaysSinceOnset[0] == .high && short.v2?.infectiousnessForDaysSinceOnset[5] == .standard)
    }

    /// GMS's defaults where a configuration is silent: all 29 days standard, a missing onset
    /// standard, a missing report type a confirmed test (`ExposureMatchingTracer`).
    @Test func aV2ConfigurationWithoutAMapScoresEveryDaySinceOnset() throws {
        let configuration = try ExposureConfiguration(json: Data(#"{"immediateDurationWeight": 100}"#.utf8))
        let v2 = try #require(configuration.v2)
        #expect(v2.infectiousnessForDaysSinceOnset == V2Configuration.everyDayStandard)
        #expect(v2.infectiousnessWhenDaysSinceOnsetMissing == .standard)
        #expect(v2.reportTypeWhenMissing == .confirmedTest)
        #expect(WindowBuilder.infectiousness(daysSinceOnset: 7, configuration: v2) == .standard)
        #expect(WindowBuilder.infectiousness(daysSinceOnset: -14, configuration: v2) == .standard)
    }

    static let refusals: [(String, String)] = [
        (#"{"config": {"attenuationImmediateWeight": 150}}"#, "attenuationNearWeight: missing"),
        (#"{"config": {"attenuationImmediateWeight": 300}}"#, "attenuationImmediateWeight: 300 is not a number in 0...250"),
        (#"{"config": {"confirmedTestPerDaySumERVThreshold_5": 1}}"#, "confirmedTestPerDaySumERVThreshold_5: ENX has classifications 1...4"),
        (#"{"config": {"attenuationImmediateWieght": 150}}"#, "attenuationImmediateWieght: not a key of the ENX configuration"),
        (
            String(decoding: enx(#", "symptomOnsetToInfectiousnessMap": "0xZZ""#), as: UTF8.self),
            "symptomOnsetToInfectiousnessMap: \"0xZZ\" is not a hex number"
        ),
        (String(decoding: enx(#", "symptomOnsetToInfectiousnessMap": "0x3""#), as: UTF8.self), "symptomOnsetToInfectiousnessMap: entry 0 is 3"),
        (String(decoding: enx(#", "reportTypeNoneMap": 5"#), as: UTF8.self), "reportTypeNoneMap: 5 is not an integer in 0...4"),
        (#"{"attenuationBucketWeights": [1, 1, 1, 1]}"#, "attenuationBucketThresholdDb: missing"),
        (
            #"{"attenuationBucketThresholdDb": [55, 70, 80], "attenuationBucketWeights": [2.6, 1, 1, 1]}"#,
            "attenuationBucketWeights: 2.6 is not a number in 0...2.5"
        ),
        (#"{"attenuationBucketThresholdDb": [55, 70], "attenuationBucketWeights": [1, 1, 1, 1]}"#, "attenuationBucketThresholdDb: expected 3 integers"),
        (
            #"{"attenuationBucketThresholdDb": [55, 70, 80], "attenuationBucketWeights": [1, 1, 1, 1], "reportTypeWeightConfirmedTests": 1}"#,
            "reportTypeWeightConfirmedTests: not a key of Google's DailySummariesConfig"
        ),
        (
            #"{"attenuationBucketThresholdDb": [55, 70, 80], "attenuationBucketWeights": [1, 1, 1, 1], "daysSinceOnsetToInfectiousness": {"0": "SOME"}}"#,
            #"daysSinceOnsetToInfectiousness["0"]: SOME is not NONE, STANDARD or HIGH"#
        ),
        (#"{"lowerThreshold": 63, "higherThreshold": 55}"#, "higherThreshold: 55 is not above lowerThreshold 63"),
        (#"{"lowerThreshold": 55, "factorHigh": 0.5, "factorMedium": 1}"#, "factorMedium: not a key of SwissCovid's GAENSDKConfig"),
        (#"{"androidGaenSdkConfig": {"triggerThreshold": -1}}"#, "androidGaenSdkConfig.triggerThreshold: -1 is not a number in 0...1440"),
        (#"{"durationAtAttenuationThresholds": [63]}"#, "durationAtAttenuationThresholds: expected 2 integers"),
        (#"{"factorLow": 1, "minimumDailyScore": 900}"#, "minimumDailyScore: one verdict rule per configuration"),
    ]

    /// What gaend cannot honour is refused, naming the key; an app's own keys are not.
    @Test(arguments: refusals)
    func valuesGaendCannotHonourAreRefusedByKey(json: String, message: String) {
        #expect {
            _ = try ExposureConfiguration(json: Data(json.utf8))
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func appKeysAreNeverErrors() throws {
        let koronavilkku = #"""
            {"version": 7, "availableCountries": ["DE"], "endOfLifeReached": false, "endOfLifeStatistics": [],
             "attenuationBucketThresholdDb": [51, 63, 70], "attenuationBucketWeights": [1.25, 1.0, 0.5, 0.0]}
            """#
        #expect(try ExposureConfiguration(json: Data(koronavilkku.utf8)).format == .googleDailySummaries)
        #expect(try ExposureConfiguration(json: Self.enx(#", "agencyColor": [0.1, 0.2, 0.3], "tekUploadURL": "https://x""#)).format == .enx)
    }
}
