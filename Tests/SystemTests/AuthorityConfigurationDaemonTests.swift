// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import Glibc
import KeyFiles
import Logging
import Storage
import Testing
import SystemCalls

/// The real authorities' configurations on the release binaries: gaend scores a planted exposure by
/// each one's rule (ENX's classification, Koronavilkku's daily minimum, SwissCovid's minutes), a
/// reload switches between them and a bad one is refused with the old one kept; `gaenctl tools
/// score` answers offline with the same code.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct AuthorityConfigurationDaemonTests {
    /// Tests/DetectionTests/Fixtures/configurations/NAME (Fixtures/SOURCES.md there).
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("DetectionTests/Fixtures/configurations/\(name)").path
    }

    /// 20 minutes, two days ago, at 55 dB of attenuation from a key the key server then publishes:
    /// ENX's sample puts it in its medium bucket (0.5: 600 s, classification 2), Koronavilkku's in
    /// its immediate one (2.0: 2400, × 1.5 for day 0 since onset: 3600 ≥ 900), SwissCovid's in its medium one (20 × 0.5 = 10 < 15).
    @Test func eachAuthoritysRuleDecidesAndAReloadSwitchesThem() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        let tek = Bytes16(words: (0x1112_1314_1516_1718, 0x191A_1B1C_1D1E_1F20))
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(data: data, pemPath: pem, tek: tek, day: day, region: "FI")
        let server = planted.server
        let configuration = directory.path + "/exposure-configuration.json"
        func use(_ name: String) throws {
            try FileManager.default.removeItem(atPath: configuration)
            try FileManager.default.copyItem(atPath: Self.fixture(name), toPath: configuration)
        }
        try FileManager.default.copyItem(atPath: Self.fixture("enx-sample.json"), toPath: configuration)

        let harness = try ManagerHarness(
            directory: directory,
            [
                "--radio", "none", "--index-url", server.baseURL + "/index.txt", "--export-key", "310:v1:\(pem)", "--enable", "true",
                "--exposure-configuration", configuration,
            ])
        // ENX: the answer line carries the classification, as do status and the summaries.
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0, "\(detected.standardError)")
        let answer = detected.standardOutput.split(separator: "\n").first { !$0.hasPrefix("progress") }
        #expect(answer == "exposure on \(day) (score 600, classification 2 (Classification 2))", "\(detected.standardOutput)")
        let result = try harness.json(["detect"]) as? [String: Any] ?? [:]
        #expect((result["classification"] as? [String: Any])?["index"] as? Int == 2)
        try SchemaCheck.expect(try harness.ctl(["detect", "--json"]).standardOutput, matches: "detection")
        let status = try harness.ctl(["status"]).standardOutput
        #expect(status.contains("\tExposureClassification: 2 (Classification 2)\n"), "\(status)")
        let properties = try harness.status()
        #expect(properties["exposure_classification"] as? Int == 2)
        #expect(properties["exposure_classification_name"] as? String == "Classification 2")
        try SchemaCheck.expect(try harness.ctl(["status", "--json"]).standardOutput, matches: "status")
        let table = try harness.ctl(["exposures", "--summaries"]).standardOutput
        #expect(table.contains("exposure, classification 2 (Classification 2)"), "\(table)")

        // Koronavilkku's, by a reload: an exposure, no classification.
        try use("koronavilkku-v2.json")
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("the reload applied", explain: { harness.stderr }) {
            let now = try harness.status()
            return now["exposure_classification"] as? Int == 0 && now["exposure_days"] as? [String] == [day.description]
        }
        let summaries = try harness.json(["exposures", "--summaries"]) as? [[String: Any]] ?? []
        // Day 0 since onset is high infectiousness in Finland (1.5): 2400 weighted seconds score 3600.
        #expect(summaries.first?["weighted_duration_sum"] as? Double == 2400, "\(summaries)")
        #expect(summaries.first?["score_sum"] as? Double == 3600 && summaries.first?["exposed"] as? Bool == true, "\(summaries)")

        // A file gaend cannot read refuses the reload, naming the file and the key; the old one stays.
        try Data(#"{"attenuationBucketThresholdDb": [55, 70, 80], "attenuationBucketWeights": [2, 1, 0.25, 3]}"#.utf8)
            .write(to: URL(fileURLWithPath: configuration))
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("the refusal logged", explain: { harness.stderr }) {
            harness.stderr.contains("configuration not reloaded") && harness.stderr.contains("attenuationBucketWeights: 3 is not a number in 0...2.5")
        }
        #expect(harness.stderr.contains(configuration), "\(harness.stderr)")
        #expect(try harness.status()["exposure_days"] as? [String] == [day.description])

        // SwissCovid's: 10 weighted minutes are not the 15 it asks.
        try use("swisscovid-gaensdkconfig.json")
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("SwissCovid's rule applied", explain: { harness.stderr }) {
            try harness.status()["exposure_days"] as? [String] == []
        }
        let swiss = try harness.json(["detect"]) as? [String: Any] ?? [:]
        let perDay = swiss["per_day"] as? [[String: Any]] ?? []
        #expect(perDay.first?["medium_minutes"] as? Double == 20 && perDay.first?["weighted_minutes"] as? Double == 10, "\(swiss)")
        #expect(harness.stop() == .success)
    }

    /// A configuration gaend cannot read stops it at start, with or without a key server.
    @Test func aBadConfigurationStopsGaendAtStart() throws {
        let directory = try TemporaryDirectory()
        let bad = directory.path + "/bad.json"
        try Data(#"{"config": {"attenuationImmediateWeight": 150}}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let run = try ToolRunner.run("gaend", ["--data-dir", directory.path + "/data", "--radio", "none", "--exposure-configuration", bad], limit: 30)
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("exposure-configuration: \(bad): attenuationNearWeight: missing"), "\(run.standardError)")
    }

    /// `gaenctl tools score` on the release binary: every real configuration that scores windows,
    /// the verdict per day and the JSON of its schema; exit 2 naming the key or the window.
    @Test func toolsScoreAnswersOfflineUnderEachConfiguration() throws {
        let directory = try TemporaryDirectory()
        let windows = directory.path + "/windows.json"
        // 16 minutes at 40 dB of a confirmed test on 2026-11-20, and 30 minutes far away on 2026-11-21.
        try Data(
            #"""
            [{"day": "2026-11-20", "report_type": "confirmed-test", "infectiousness": "standard", "calibration_confidence": "medium",
              "scan_instances": [{"typical_attenuation": 40, "minimum_attenuation": 38, "seconds_since_last_scan": 960}]},
             {"day": "2026-11-21", "report_type": "confirmed-test", "infectiousness": "standard", "calibration_confidence": "medium",
              "scan_instances": [{"typical_attenuation": 95, "minimum_attenuation": 90, "seconds_since_last_scan": 1800}]}]
            """#.utf8
        ).write(to: URL(fileURLWithPath: windows))
        let expectations: [(String, [String], Int?)] = [
            ("enx-sample.json", ["2026-11-20"], 2), ("koronavilkku-v2.json", ["2026-11-20"], nil), ("swisscovid-gaensdkconfig.json", ["2026-11-20"], nil),
            ("cwa-ios-exposure-configuration.json", ["2026-11-20", "2026-11-21"], nil),
        ]
        for (name, days, classification) in expectations {
            let run = try ToolRunner.run("gaenctl", ["tools", "score", "--config", Self.fixture(name), windows, "--today", "2026-11-22", "--json"])
            #expect(run.status == 0, "\(name): \(run.standardError)")
            try SchemaCheck.expect(run.standardOutput, matches: "score")
            let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
            #expect(object["exposure_days"] as? [String] == days, "\(name): \(run.standardOutput)")
            #expect((object["classification"] as? [String: Any])?["index"] as? Int == classification, "\(name)")
        }
        let text = try ToolRunner.run("gaenctl", ["tools", "score", "--config", Self.fixture("enx-sample.json"), windows, "--today", "2026-11-22"])
        #expect(
            text.standardOutput.contains(
                "day 2026-11-20: score sum 960.0, maximum 960.0, weighted duration 960.0 s: EXPOSURE, classification 2 (Classification 2)"),
            "\(text.standardOutput)")
        #expect(text.standardOutput.hasSuffix("exposure days: 2026-11-20\n"), "\(text.standardOutput)")

        let v1 = try ToolRunner.run("gaenctl", ["tools", "score", "--config", Self.fixture("nl-RiskCalcDefaults.json"), windows])
        #expect(v1.status == 2 && v1.standardError.contains("is a v1 configuration"), "\(v1.standardError)")
        try Data(
            #"[{"day": "2026-11-20", "report_type": "confirmed-test", "infectiousness": "standard", "scan_instances": [{"typical_attenuation": 40}]}]"#.utf8
        )
        .write(to: URL(fileURLWithPath: windows))
        let bad = try ToolRunner.run("gaenctl", ["tools", "score", "--config", Self.fixture("enx-sample.json"), windows])
        #expect(bad.status == 2 && bad.standardError.contains("window 0, scan instance 0: no minimum_attenuation"), "\(bad.standardError)")
        let config = directory.path + "/config.json"
        try Data(#"{"lowerThreshold": 70, "higherThreshold": 60}"#.utf8).write(to: URL(fileURLWithPath: config))
        let badConfig = try ToolRunner.run("gaenctl", ["tools", "score", "--config", config, windows])
        #expect(badConfig.status == 2 && badConfig.standardError.contains("higherThreshold: 60 is not above lowerThreshold 70"), "\(badConfig.standardError)")
    }

    /// Corona-Warn-App's Android configuration, as served: its rule (the published test cases'
    /// parameters, cwa-server's 14 days) with a data mapping that makes the planted key's day 0
    /// standard. The planted 20 minutes at 55 dB: 20 × 0.8 weighted minutes × 1.4 (a confirmed
    /// test, standard: level 7) = 22.4 ≥ 9, a day of high risk.
    static func coronaWarnAppAndroid(at path: String) throws {
        let cases = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("DetectionTests/Fixtures/windows/cwa-exposure-windows-risk-calculation.json")
        let fixture = try JSONSerialization.jsonObject(with: Data(contentsOf: cases)) as? [String: Any] ?? [:]
        var rules = fixture["defaultRiskCalculationConfiguration"] as? [String: Any] ?? [:]
        rules["maxEncounterAgeInDays"] = 14
        let root: [String: Any] = [
            "minVersionCode": 1, "riskCalculationParameters": rules,
            "diagnosisKeysDataMapping": ["daysSinceOnsetToInfectiousness": ["0": 1, "1": 1, "2": 2], "reportTypeWhenMissing": 1],
            "dailySummariesConfig": ["attenuationBucketThresholdDb": [30, 50, 70], "attenuationBucketWeights": [1, 1, 1, 1]],
        ]
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: path))
    }

    /// Issue 46: the daemon judges by Corona-Warn-App's own rule, and `gaenctl tools score` gives
    /// the same verdict offline; a configuration carrying CWA 1.x's rule is refused by name.
    @Test func corinaWarnAppsRuleDecides() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(
            data: data, pemPath: pem, tek: Bytes16(words: (0x2122_2324_2526_2728, 0x292A_2B2C_2D2E_2F30)), day: day, region: "DE")
        let configuration = directory.path + "/cwa.json"
        try Self.coronaWarnAppAndroid(at: configuration)
        let harness = try ManagerHarness(
            directory: directory,
            [
                "--radio", "none", "--index-url", planted.server.baseURL + "/index.txt", "--export-key", "310:v1:\(pem)", "--enable", "true",
                "--exposure-configuration", configuration,
            ])
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0, "\(detected.standardError)")
        #expect(detected.standardOutput.contains("exposure on \(day) (Corona-Warn-App: high risk, normalized time 22.4)"), "\(detected.standardOutput)")
        let result = try harness.ctl(["exposures", "--json"])
        #expect(result.status == 0)
        let run = try harness.ctl(["detect", "--json"])
        try SchemaCheck.expect(run.standardOutput, matches: "detection")
        #expect(harness.stop() == .success)

        // The same windows offline: gaend's own JSON of them, scored by the same configuration.
        let windows = directory.path + "/windows.json"
        try Data(result.standardOutput.utf8).write(to: URL(fileURLWithPath: windows))
        let today = UTCDay(containing: SystemWallClock().now()).description
        let scored = try ToolRunner.run("gaenctl", ["tools", "score", "--config", configuration, windows, "--today", today, "--json"])
        #expect(scored.status == 0, "\(scored.standardError)")
        try SchemaCheck.expect(scored.standardOutput, matches: "score")
        let object = try JSONSerialization.jsonObject(with: Data(scored.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(object["configuration_format"] as? String == "corona-warn-app")
        #expect(object["exposure_days"] as? [String] == [day.description])
        let risk = object["corona_warn_app"] as? [String: Any] ?? [:]
        #expect(risk["total_risk_level"] as? String == "high" && risk["most_recent_date_with_high_risk"] as? String == day.description, "\(risk)")
        let text = try ToolRunner.run("gaenctl", ["tools", "score", "--config", configuration, windows, "--today", today])
        #expect(
            text.standardOutput.contains("risk \(day): normalized time 22.4, high risk (1 high-risk, 0 low-risk encounters): EXPOSURE"),
            "\(text.standardOutput)")
        #expect(
            text.standardOutput.contains("Corona-Warn-App: high risk, 1 day(s) of high risk and 0 of low risk, the latest on \(day)"), "\(text.standardOutput)")

        // CWA 1.x's rule is refused by name, at start as in the tool.
        let old = directory.path + "/cwa-1.json"
        try Data(#"{"minRiskScore": 11, "riskScoreClasses": {"riskClasses": []}, "exposureConfig": {}}"#.utf8).write(to: URL(fileURLWithPath: old))
        let refused = try ToolRunner.run("gaenctl", ["tools", "score", "--config", old, windows])
        #expect(
            refused.status == 2 && refused.standardError.contains("minRiskScore: Corona-Warn-App 1.x's minimum risk score, which gaend does not implement"),
            "\(refused.standardError)")
    }
}
