// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import Logging
import Storage
import Testing
import SystemCalls

/// End to end: sightings of a known key planted in a log, the key exported in a signed file by
/// `gaenctl tools export`, and `gaenctl tools match` finding the expected window and summary.
@Suite(.ownThreads) struct MatchToolTests {
    @Test func aPlantedKeyIsFoundWithItsWindowAndSummary() async throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/gaend")
        let tek = Bytes16(words: (0x1111_2222_3333_4444, 0x5555_6666_7777_8888))
        let today = UTCDay(containing: SystemWallClock().now())
        let day = today.advanced(by: -2)
        let start = try #require(day.firstInterval)
        let crypto = try ExposureKeyCrypto()
        let (rpik, aemk) = crypto.keys(for: tek)

        // Two scans of the key's RPIs at 10:00 and 10:04 UTC, TX power 8 dBm, RSSI −60 then −70.
        do {
            let writer = try ContactLogWriter(
                dataDirectory: data, clock: SystemWallClock(), logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            let first = day.start.adding(seconds: 10 * 3600)
            for (offset, rssi, previous) in [(Int64(0), Int8(-60), Int64(-250)), (240, -70, 4)] {
                let seen = first.adding(seconds: offset)
                let interval = try #require(ENIntervalNumber(containing: seen))
                let rpi = crypto.rpi(rpik: rpik, interval: interval)
                var summary = RSSISummary()
                summary.add(rssi)
                let aggregate = ContactAggregate(
                    rpi: rpi, aem: crypto.aem(for: .version1_1(txPower: 8, calibrationConfidence: .low), aemk: aemk, rpi: rpi),
                    firstSeen: seen, lastSeen: seen.adding(seconds: 1), reports: 1, rssi: summary, previousScanEnd: first.adding(seconds: previous))
                try await writer.append(
                    window: ScanWindowRecord(
                        start: seen, end: seen.adding(seconds: 4), reports: 3, exposureNotificationReports: 1, aggregates: 1,
                        previousScanEnd: first.adding(seconds: previous), monotonicMilliseconds: 4000),
                    aggregates: [aggregate])
            }
        }
        // The key, and a stranger's, in a file signed by a key made with openssl.
        let ourKey = Data(tek.bytes).base64EncodedString()
        let keys = directory.path + "/keys.json"
        let (file, publicKey) = try Self.signedExport(
            directory,
            """
            [{"key": "\(ourKey)", "rollingStartNumber": \(start.rawValue), "transmissionRisk": 4, "reportType": 1, "daysSinceOnsetOfSymptoms": 0},
             {"key": "AAAAAAAAAAAAAAAAAAAAAA==", "rollingStartNumber": \(start.rawValue), "reportType": 1}]
            """)

        let config = directory.path + "/config.json"
        try Data(
            #"""
            {"attenuationDurationThresholds": [50, 70, 90], "immediateDurationWeight": 100, "nearDurationWeight": 100,
             "mediumDurationWeight": 50, "otherDurationWeight": 0, "infectiousnessForDaysSinceOnsetOfSymptoms": {"0": 1},
             "reportTypeConfirmedTestWeight": 100}
            """#.utf8
        ).write(to: URL(fileURLWithPath: config))
        let run = try ToolRunner.run(
            "gaenctl",
            [
                "tools", "match", "--data-dir", data.path, "--config", config, file, "--public-key", publicKey, "--key-id", "310",
                "--key-version", "v1", "--today", "\(today)", "--json",
            ])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect((object["files"] as? [[String: Any]])?.first?["verdict"] as? String == "verified")
        #expect((object["statistics"] as? [String: Any])?["matched_keys"] as? Int == 1)
        let windows = try #require(object["windows"] as? [[String: Any]])
        #expect(windows.count == 1)
        #expect(windows[0]["day"] as? String == day.description)
        #expect(windows[0]["report_type"] as? String == "confirmed-test")
        let instances = try #require(windows[0]["scan_instances"] as? [[String: Any]])
        // 8 − (−60) = 68 dB after 5 minutes (previous scan 250 s before), 78 dB after 4.
        #expect(instances.map { $0["typical_attenuation"] as? Int } == [68, 78])
        #expect(instances.map { $0["seconds_since_last_scan"] as? Int } == [300, 240])
        let summary = try #require((object["daily_summaries"] as? [[String: Any]])?.first)
        // 68 ≤ 70 is near (100 %): 300 s; 78 ≤ 90 is medium (50 %): 120 s.
        #expect(summary["weighted_duration_sum"] as? Int == 420)
        #expect(summary["score_sum"] as? Int == 420)
        #expect(summary["day"] as? String == day.description)

        // Without the trusted key nothing is matched, and the exit says so.
        let untrusted = try ToolRunner.run("gaenctl", ["tools", "match", "--data-dir", data.path, "--config", config, file])
        #expect(untrusted.status == 1)
        #expect(untrusted.standardOutput.contains("unknown-key"))
        let badConfig = try ToolRunner.run("gaenctl", ["tools", "match", "--data-dir", data.path, "--config", keys, file])
        #expect(badConfig.status == 2)
        #expect(badConfig.standardError.contains("--config"))
    }
}

extension MatchToolTests {
    /// `keys` (the publish API's JSON) in a file written by `gaenctl tools export`, signed by a key
    /// made with openssl as key id 310 version v1: the file's path and the public PEM's.
    static func signedExport(_ directory: TemporaryDirectory, _ keys: String) throws -> (file: String, publicKey: String) {
        let signing = directory.path + "/signing.pem"
        let publicKey = directory.path + "/public.pem"
        #expect(
            try KeyFileToolTests.shell(
                "openssl ecparam -name prime256v1 -genkey -noout -out '\(signing)' && openssl ec -in '\(signing)' -pubout -out '\(publicKey)' 2>/dev/null") == 0
        )
        let json = directory.path + "/keys.json"
        try Data(keys.utf8).write(to: URL(fileURLWithPath: json))
        let file = directory.path + "/export.zip"
        let export = try ToolRunner.run(
            "gaenctl",
            ["tools", "export", "--keys", json, "--private-key", signing, "--key-id", "310", "--key-version", "v1", "--region", "US", "--out", file])
        #expect(export.status == 0, "\(export.standardError)")
        return (file, publicKey)
    }
}

/// `gaenctl tools log append --tek`: a known key's sightings planted through the real writer (the VM
/// stage's way to an exposure, btvirt reporting no RSSI) are what `tools match` finds for that key.
@Suite(.ownThreads) struct PlantedKeyToolTests {
    @Test func theAppendToolPlantsSightingsOfTheKey() throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/gaend"
        let tek = String(repeating: "5a", count: 16)
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -3)
        let append = try ToolRunner.run(
            "gaenctl", ["tools", "log", "append", "--data-dir", data, "--aggregates", "6", "--tek", tek, "--last-day", "\(day)"])
        #expect(append.status == 0, "\(append.standardError)")
        let key = Data(repeating: 0x5a, count: 16).base64EncodedString()
        let (file, publicKey) = try MatchToolTests.signedExport(
            directory, #"[{"key": "\#(key)", "rollingStartNumber": \#(try #require(day.firstInterval).rawValue), "reportType": 1}]"#)
        let config = directory.path + "/config.json"
        try Data(
            #"{"attenuationDurationThresholds": [50, 60, 70], "immediateDurationWeight": 100, "nearDurationWeight": 100, "mediumDurationWeight": 100, "otherDurationWeight": 0, "infectiousnessForDaysSinceOnsetOfSymptoms": {"0": 1}, "infectiousnessWhenDaysSinceOnsetMissing": 1, "reportTypeConfirmedTestWeight": 100}"#
                .utf8
        ).write(to: URL(fileURLWithPath: config))
        let run = try ToolRunner.run(
            "gaenctl",
            ["tools", "match", "--data-dir", data, "--config", config, file, "--public-key", publicKey, "--key-id", "310", "--key-version", "v1", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect((object["statistics"] as? [String: Any])?["matched_keys"] as? Int == 1)
        let windows = try #require(object["windows"] as? [[String: Any]])
        let instances = windows.flatMap { $0["scan_instances"] as? [[String: Any]] ?? [] }
        // Six windows, 4 h apart, over the day; each sighting at -55 dBm of an AEM saying 0 dBm.
        #expect(instances.count == 6)
        #expect(instances.allSatisfy { $0["typical_attenuation"] as? Int == 55 })
        #expect(windows.allSatisfy { $0["day"] as? String == day.description })
    }
}

/// `gaenctl tools replay` on the release binary: a recording through gaend's path, as JSON, and a
/// bad row refused by its line.
@Suite(.ownThreads) struct ReplayToolTests {
    @Test func aRecordingReplaysAndABadRowIsNamed() throws {
        let directory = try TemporaryDirectory()
        let csv = directory.path + "/sightings.csv"
        // Two scans of B by A, 4 minutes apart, on 2026-11-20 (1795168800 is 10:00 UTC).
        try Data("time,receiver,transmitter,rssi\n1795168800.250,A,B,-60\n1795168801.5,A,B,-62\n1795169040.0,A,B,-61\n".utf8)
            .write(to: URL(fileURLWithPath: csv))
        let run = try ToolRunner.run("gaenctl", ["tools", "replay", csv, "--tx-power", "-24", "--rssi-correction", "+5", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        let pairs = object["pairs"] as? [[String: Any]] ?? []
        #expect(pairs.count == 1 && pairs.first?["receiver"] as? String == "A" && pairs.first?["transmitter"] as? String == "B")
        let instances = ((pairs.first?["windows"] as? [[String: Any]])?.first?["scan_instances"] as? [[String: Any]]) ?? []
        // −29 − rssi: −60 and −62 give 31 and 33 (typical 32), then 32; 120 s for the first scan.
        #expect(instances.map { $0["typical_attenuation"] as? Int } == [32, 32])
        #expect(instances.map { $0["seconds_since_last_scan"] as? Int } == [120, 240])
        #expect(pairs.first?["exposure_days"] as? [String] == ["2026-11-20"])
        #expect((object["statistics"] as? [String: Any])?["scans"] as? Int == 2)

        try Data("time,receiver,transmitter,rssi\n1795168800.250,A,B,-60\n1795168801.5,A,B,loud\n".utf8).write(to: URL(fileURLWithPath: csv))
        let bad = try ToolRunner.run("gaenctl", ["tools", "replay", csv])
        #expect(bad.status == 2)
        #expect(bad.standardError.contains("line 3: rssi 'loud' is not dBm"), "\(bad.standardError)")
    }
}
