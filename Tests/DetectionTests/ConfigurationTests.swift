// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import Detection
import Foundation
import Testing

@Suite(.ownThreads) struct ConfigurationTests {
    /// The v2 object of Apple's sample app (seeds/004), with its v1 keys.
    static let appleV2 = """
        {"immediateDurationWeight":100, "nearDurationWeight":100, "mediumDurationWeight":100, "otherDurationWeight":100,
         "infectiousnessForDaysSinceOnsetOfSymptoms":{"unknown":1, "-14":1, "-1":1, "0":1, "1":1, "14":1},
         "infectiousnessStandardWeight":100, "infectiousnessHighWeight":100,
         "reportTypeConfirmedTestWeight":100, "reportTypeConfirmedClinicalDiagnosisWeight":100,
         "reportTypeSelfReportedWeight":100, "reportTypeRecursiveWeight":100, "reportTypeNoneMap":1,
         "minimumRiskScore":0, "attenuationDurationThresholds":[50, 70],
         "attenuationLevelValues":[1, 2, 3, 4, 5, 6, 7, 8], "daysSinceLastExposureLevelValues":[1, 2, 3, 4, 5, 6, 7, 8],
         "durationLevelValues":[1, 2, 3, 4, 5, 6, 7, 8], "transmissionRiskLevelValues":[1, 2, 3, 4, 5, 6, 7, 8]}
        """

    /// The v1 object of Apple's first sample app (seeds/000).
    static let appleV1 = """
        {"minimumRiskScore":0, "attenuationWeight":50, "attenuationScores":[1, 2, 3, 4, 5, 6, 7, 8],
         "daysSinceLastExposureWeight":50, "daysSinceLastExposureScores":[1, 2, 3, 4, 5, 6, 7, 8],
         "durationWeight":50, "durationScores":[1, 2, 3, 4, 5, 6, 7, 8],
         "transmissionRiskWeight":50, "transmissionRiskScores":[1, 2, 3, 4, 5, 6, 7, 8]}
        """

    @Test func theSampleAppShapesParse() throws {
        let v2 = try ExposureConfiguration(json: Data(Self.appleV2.utf8))
        #expect(v2.v2?.attenuationThresholds == [50, 70, 70])
        #expect(v2.v2?.infectiousnessForDaysSinceOnset[-14] == .standard)
        #expect(v2.v2?.infectiousnessForDaysSinceOnset[5] == nil)
        #expect(v2.v2?.reportTypeWhenMissing == .confirmedTest)
        #expect(v2.v1?.attenuationScores == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(v2.isV1Only == false)

        let v1 = try ExposureConfiguration(json: Data(Self.appleV1.utf8))
        #expect(v1.v2 == nil)
        #expect(v1.isV1Only)
        #expect(v1.v1?.attenuationWeight == 50)

        let perDay = try ExposureConfiguration(
            json: Data(#"{"attenuationDurationThresholds":[55,63],"factorLow":1,"factorMedium":0.5,"triggerThreshold":15}"#.utf8))
        #expect(perDay.perDay == PerDayConfiguration())
        #expect(perDay.v2 == nil && perDay.v1 == nil)
    }

    static let invalid: [(String, String)] = [
        (#"{"immediateDurationWeight":300}"#, "immediateDurationWeight: 300 is not a number in 0...250"),
        (#"{"nearDurationWeight":"high"}"#, "nearDurationWeight: high is not a number in 0...250"),
        (#"{"attenuationScores":[1,2,3]}"#, "attenuationScores: expected 8 integers"),
        (#"{"durationLevelValues":[1,2,3,4,5,6,7,9]}"#, "durationLevelValues: every score must be 0...8"),
        (#"{"attenuationDurationThresholds":[70,50]}"#, "attenuationDurationThresholds: [70, 50] must be strictly increasing"),
        (#"{"infectiousnessForDaysSinceOnsetOfSymptoms":{"15":1}}"#, #"infectiousnessForDaysSinceOnsetOfSymptoms["15"]: days since onset must be -14...14"#),
        (
            #"{"infectiousnessForDaysSinceOnsetOfSymptoms":{"0":3}}"#,
            #"infectiousnessForDaysSinceOnsetOfSymptoms["0"]: 3 is not 0 (none), 1 (standard) or 2 (high)"#
        ),
        (#"{"reportTypeNoneMap":5}"#, "reportTypeNoneMap: 5 is not an integer in 0...4"),
        (#"{"minimumRiskScore":5000}"#, "minimumRiskScore: 5000 is not an integer in 0...4096"),
        (#"{"riskScoreFormula":"average","durationWeight":10}"#, "riskScoreFormula: average is neither"),
        (#"{"reportTypeNoneMap":true}"#, "reportTypeNoneMap: 1 is not an integer"),
        (#"{"immediateDurationWieght":100}"#, "immediateDurationWieght: not a configuration key"),
        // Scores read through NSNumber.intValue took 2^64 + 1 for 1 and 1.5 for 1.
        (#"{"attenuationScores":[18446744073709551617, 1, 1, 1, 1, 1, 1, 1]}"#, "attenuationScores: expected 8 integers"),
        (#"{"durationScores":[1.5, 1, 1, 1, 1, 1, 1, 1]}"#, "durationScores: expected 8 integers"),
        (#"[1,2]"#, "not a JSON object"),
        ("{", "not JSON"),
    ]

    @Test(arguments: invalid)
    func invalidValuesNameTheirKey(json: String, message: String) {
        #expect {
            _ = try ExposureConfiguration(json: Data(json.utf8))
        } throws: { error in
            "\(error)".hasPrefix(message) || "\(error)".contains(message)
        }
    }
}
