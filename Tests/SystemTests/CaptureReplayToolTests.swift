// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Testing

/// `gaenctl tools replay` on btsnoop captures, on the release gaenctl: experiment 34's 18 phones'
/// own HCI logs (read as they are from ../shared), and a capture cut short, refused by file and
/// record with exit 2 and nothing printed.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct CaptureReplayToolTests {
    static let pcaps = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/traces/dp3t-exp34/pcaps").path

    @Test func experiment34sCapturesReplay() throws {
        guard FileManager.default.fileExists(atPath: Self.pcaps) else {
            print("CaptureReplayToolTests: skipped: \(Self.pcaps) is absent")
            return
        }
        let captures = try FileManager.default.contentsOfDirectory(atPath: Self.pcaps).filter { $0.hasSuffix(".btsnoop") }.sorted()
            .map { Self.pcaps + "/" + $0 }
        // The office scenario's twenty minutes (SOURCES.md), CEST to UTC.
        let run = try ToolRunner.run(
            "gaenctl",
            ["tools", "replay"] + captures + ["--time-offset", "-7200", "--from", "2020-07-30T13:20:00Z", "--until", "2020-07-30T13:40:00Z", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let statistics = object?["statistics"] as? [String: Any] ?? [:]
        #expect(statistics["receivers"] as? Int == 18, "\(statistics)")
        #expect((statistics["rows"] as? Int ?? 0) > 6_309, "more than the office's sqlite rows: \(statistics)")
        #expect((statistics["pairs_heard"] as? Int ?? 0) > 0)
    }

    /// Phone 01's capture into a new contact log: the figures of this capture, then a log that
    /// verifies whole, with the day's scan windows and their reports.
    @Test func aCaptureImportsIntoAContactLog() throws {
        let capture = Self.pcaps + "/01.btsnoop"
        guard FileManager.default.fileExists(atPath: capture) else {
            print("CaptureReplayToolTests: skipped: \(capture) is absent")
            return
        }
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let run = try ToolRunner.run("gaenctl", ["tools", "log", "import", capture, "--data-dir", data, "--time-offset", "-7200", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(object["gaen_sightings"] as? Int == 9_957, "\(object)")
        #expect(object["scan_windows"] as? Int == 460, "\(object)")
        #expect(object["outside_scans"] as? Int == 0, "\(object)")
        #expect(object["aggregates"] as? Int == 1_435, "\(object)")
        let verify = try ToolRunner.run("gaenctl", ["tools", "log", "verify", "--data-dir", data])
        #expect(verify.status == 0 && verify.standardOutput.contains("intact: 1 segments"), "\(verify.standardOutput)")
        // A bad capture changes nothing: the log is as it was.
        let cut = directory.path + "/cut.btsnoop"
        try Data(try Data(contentsOf: URL(fileURLWithPath: capture)).dropLast(3)).write(to: URL(fileURLWithPath: cut))
        let refused = try ToolRunner.run("gaenctl", ["tools", "log", "import", cut, "--data-dir", data])
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(refused.standardError.contains("cut.btsnoop: record"), "\(refused.standardError)")
        #expect(try ToolRunner.run("gaenctl", ["tools", "log", "stats", "--data-dir", data, "--json"]).standardOutput.contains(#""aggregates":1435"#))

        // Every phone's capture imports, each into a log of its own that verifies whole.
        var sightings = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.pcaps).filter({ $0.hasSuffix(".btsnoop") }).sorted() {
            let folder = directory.path + "/" + name
            let imported = try ToolRunner.run(
                "gaenctl", ["tools", "log", "import", Self.pcaps + "/" + name, "--data-dir", folder, "--time-offset", "-7200", "--json"])
            #expect(imported.status == 0, "\(name): \(imported.standardError)")
            let figures = try JSONSerialization.jsonObject(with: Data(imported.standardOutput.utf8)) as? [String: Any] ?? [:]
            sightings += figures["gaen_sightings"] as? Int ?? 0
            #expect(try ToolRunner.run("gaenctl", ["tools", "log", "verify", "--data-dir", folder]).status == 0, "\(name)")
        }
        // Every GAEN sighting of the captures, of logged phones and others, their own reflections too.
        #expect(sightings >= 84_456 + 103_137, "\(sightings)")
    }

    /// Issue 36: the whole day of experiment 34 from the captures, gaend's windows beside Google's
    /// (`gaen-bench traces --whole-day-only`, release). SOURCES.md measured what a faithful port of
    /// GMS's rules reaches with the same alignment: 1,434 of 1,812 windows attributed against 71-74
    /// at another receiver, seconds identical for 99.4 % of the pairs, typical within 1 dB for
    /// 81 %. gaend reaches 1,394 of 1,810 (control 72), 99.0 %, 81.7 %. The bounds leave a few
    /// points for a rule changed on purpose and fail on what is not the phones' way: measured with
    /// the calibration moved by 2 dB either way, the windows attributed fall to 164-181 and the
    /// typical within 1 dB to 63-71 %.
    @Test func theWholeDayAgreesWithGoogleAsAFaithfulPortDoes() throws {
        guard FileManager.default.fileExists(atPath: Self.pcaps) else {
            print("CaptureReplayToolTests: skipped: \(Self.pcaps) is absent")
            return
        }
        let folder = URL(fileURLWithPath: Self.pcaps).deletingLastPathComponent().path
        let run = try ToolRunner.run("gaen-bench", ["traces", "--traces", folder, "--whole-day-only", "--json"], limit: 300)
        #expect(run.status == 0, "\(run.standardError)")
        let figures = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(figures["google_windows"] as? Int == 1_810, "\(figures)")
        #expect((figures["attributed"] as? Int ?? 0) >= 1_300, "\(figures)")
        #expect((figures["control"] as? Int ?? .max) <= 100, "\(figures)")
        #expect((figures["seconds_identical"] as? Double ?? 0) >= 0.98, "\(figures)")
        #expect((figures["typical_within_1db"] as? Double ?? 0) >= 0.78, "\(figures)")
        #expect((figures["seconds_below_55db_ratio"] as? Double ?? 0) > 0.9, "\(figures)")
        print("whole day against Google: \(run.standardOutput)")
    }

    @Test func aCaptureCutShortIsNamed() throws {
        let directory = try TemporaryDirectory()
        var capture = CaptureWriter()
        let noon = UnixTime(seconds: 1_596_110_400)
        capture.record([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], at: noon)
        capture.record([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], at: noon)
        let path = directory.path + "/07.btsnoop"
        try Data(capture.bytes.dropLast(2)).write(to: URL(fileURLWithPath: path))
        let run = try ToolRunner.run("gaenctl", ["tools", "replay", path])
        #expect(run.status == 2)
        #expect(run.standardError.contains("\(path): record 2: cut short"), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
        let offset = try ToolRunner.run("gaenctl", ["tools", "replay", path, "--from", "yesterday"])
        #expect(offset.status == 2)
        #expect(offset.standardError.contains("--from"), "\(offset.standardError)")
    }
}
