// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import GaendTestSupport
import KeyFiles
import Storage
import Testing

/// Windows read from files for `gaenctl tools score`: gaend's own JSON, and the Android API's names
/// as Corona-Warn-App's test vectors write them (Fixtures/SOURCES.md).
@Suite(.ownThreads) struct WindowsFileTests {
    static let today = UTCDay(daysSinceEpoch: 20_000)

    static func cwaCases() throws -> [[String: Any]] {
        let url = try #require(
            Bundle.module.url(forResource: "cwa-exposure-windows-risk-calculation.json", withExtension: nil, subdirectory: "Fixtures/windows"))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try #require(root["testCases"] as? [[String: Any]])
    }

    /// Every window of every case decodes; the one negative secondsSinceLastScan (case 27, "can happen
    /// when time-travelling") is counted as 0 and said so.
    @Test func corinaWarnAppsVectorsDecode() throws {
        let cases = try Self.cwaCases()
        #expect(cases.count == 29)
        var windows = 0
        var clamped = [Int]()
        for (index, testCase) in cases.enumerated() {
            let list = try JSONSerialization.data(withJSONObject: testCase["exposureWindows"] ?? [])
            let file = try WindowsFile(json: list, today: Self.today)
            windows += file.windows.count
            if file.clampedScanInstances > 0 { clamped.append(index) }
        }
        #expect(windows == 46)
        #expect(clamped == [27])
        let negative = try WindowsFile(json: JSONSerialization.data(withJSONObject: cases[27]["exposureWindows"] ?? []), today: Self.today)
        #expect(negative.clampedScanInstances == 1)
        #expect(negative.windows.flatMap(\.scanInstances).map(\.secondsSinceLastScan) == [0, 300, 300, 300])
        // The first case: ageInDays 1, a clinical diagnosis, high infectiousness, 300 + 299 s at 25 dB.
        let first = try WindowsFile(json: JSONSerialization.data(withJSONObject: cases[0]["exposureWindows"] ?? []), today: Self.today)
        let window = try #require(first.windows.first)
        #expect(window.day == Self.today.advanced(by: -1))
        #expect(window.reportType == .confirmedClinicalDiagnosis && window.infectiousness == .high && window.calibrationConfidence == .lowest)
        #expect(
            window.scanInstances == [
                ScanInstance(typicalAttenuation: 25, minimumAttenuation: 30, secondsSinceLastScan: 300),
                ScanInstance(typicalAttenuation: 25, minimumAttenuation: 30, secondsSinceLastScan: 299),
            ])
    }

    /// gaend's own shape reads back what `DetectionResult.json` writes.
    @Test func gaendsOwnWindowsReadBack() throws {
        let window = ExposureWindow(
            day: Self.today, reportType: .selfReport, infectiousness: .high, calibrationConfidence: .medium, transmissionRiskLevel: 0,
            scanInstances: [ScanInstance(typicalAttenuation: 61, minimumAttenuation: 55, secondsSinceLastScan: 180)])
        let data = Data(JSONValue.array([DetectionResult.json(window)]).serialized().utf8)
        #expect(try WindowsFile(json: data, today: Self.today).windows == [window])
        let google =
            #"[{"dateMillisSinceEpoch": 1728000000000, "reportType": "CONFIRMED_TEST", "infectiousness": "STANDARD", "scanInstances": [{"typicalAttenuationDb": 50, "minAttenuationDb": 45, "secondsSinceLastScan": 300}]}]"#
        let read = try WindowsFile(json: Data(google.utf8), today: Self.today)
        #expect(read.windows.first?.day == UTCDay(daysSinceEpoch: 20_000) && read.windows.first?.reportType == .confirmedTest)
    }

    static let refusals: [(String, String)] = [
        ("{}", "not a JSON array of exposure windows"),
        ("[1]", "window 0: not a JSON object"),
        (
            #"[{"day": "2024-10-04", "report_type": "confirmed-test", "infectiousness": "standard", "scan_instances": []}, {"ageInDays": -1}]"#,
            "window 1, ageInDays: -1 is not"
        ),
        (#"[{"day": "2024-13-04"}]"#, "window 0, day: 2024-13-04 is not YYYY-MM-DD"),
        (#"[{"ageInDays": 1, "reportType": 9, "infectiousness": 1, "scanInstances": []}]"#, "window 0, reportType: 9 is not one of"),
        (#"[{"ageInDays": 1, "reportType": 1, "infectiousness": 1}]"#, "window 0, scan_instances: missing"),
        (
            #"[{"ageInDays": 1, "reportType": 1, "infectiousness": 1, "scanInstances": [{"typicalAttenuation": 300, "minAttenuation": 1, "secondsSinceLastScan": 1}]}]"#,
            "window 0, scan instance 0, typicalAttenuation: 300 is not an integer in 0...255"
        ),
        (
            #"[{"ageInDays": 1, "reportType": 1, "infectiousness": 1, "scanInstances": [{"typicalAttenuation": 30}]}]"#,
            "window 0, scan instance 0: no minimum_attenuation"
        ),
        (#"[{"reportType": 1}]"#, "window 0: no day"),
    ]

    @Test(arguments: refusals)
    func aBadWindowIsNamedByIndex(json: String, message: String) {
        #expect {
            _ = try WindowsFile(json: Data(json.utf8), today: Self.today)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}
