// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import Testing
import SystemCalls

/// What the owner reads of a running gaend through gaenctl: what it heard (`heard`, from the
/// log over D-Bus), the configuration it runs with (`config show`, also after a reload), and the
/// key server and its last answer in `status`.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct OwnerViewDaemonTests {
    /// A data directory whose log holds yesterday's sightings, as a beacon would have logged them:
    /// `count` of `rpis` distinct RPIs, ten per scan window (`gaenctl tools log append`).
    static func yesterdaysSightings(_ count: Int, of rpis: Int) throws -> TemporaryDirectory {
        let data = try TemporaryDirectory()
        let yesterday = UTCDay(containing: SystemWallClock().now()).advanced(by: -1)
        let appended = try ToolRunner.run(
            "gaenctl",
            [
                "tools", "log", "append", "--data-dir", "\(data.path)/data", "--aggregates", "\(count)", "--distinct-rpis", "\(rpis)", "--per-window",
                "10", "--last-day", yesterday.description,
            ])
        #expect(appended.status == 0, "\(appended.standardError)")
        return data
    }

    @Test func heardConfigurationAndKeyServer() async throws {
        let files = try TemporaryDirectory()
        let (server, pem) = try await ManagerDaemonTests.keyServer(in: files)
        let config = "\(files.path)/gaend.conf"
        try "region = CH\n".write(toFile: config, atomically: true, encoding: .utf8)
        let data = try Self.yesterdaysSightings(200, of: 40)
        let index = server.baseURL + "/exports/index.txt"
        let harness = try ManagerHarness(directory: data, ["--config", config, "--radio", "none", "--index-url", index, "--export-key", "310:v1:\(pem)"])

        // heard: totals, every hour of the span, a bar chart, and no identifier.
        try SchemaCheck.expect(try harness.ctl(["heard", "--since", "2d", "--json"]).standardOutput, matches: "heard")
        let heard = try #require(try harness.json(["heard", "--since", "2d"]) as? [String: Any])
        #expect(heard["sightings"] as? Int == 200)
        #expect(heard["distinct_rpis"] as? Int == 40)
        let hours = try #require(heard["hours"] as? [[String: Any]])
        #expect(hours.count == 49)
        #expect(hours.compactMap { $0["sightings"] as? Int }.reduce(0, +) == 200)
        let bucketed = (heard["rssi"] as? [[String: Any]])?.compactMap { $0["sightings"] as? Int }.reduce(0, +) ?? 0
        #expect(bucketed + (heard["rssi_unknown"] as? Int ?? 0) == 200)
        let text = try harness.ctl(["heard", "--since", "2d"])
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("200 sightings of 40 distinct RPIs"))
        #expect(text.standardOutput.contains("█"))
        #expect(text.standardOutput.contains("strongest RSSI"))
        let export = try ToolRunner.run("gaenctl", ["tools", "log", "export", "--data-dir", "\(data.path)/data"]).standardOutput
        let someRPI = String(try #require(export.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first))
        #expect(someRPI.count == 32)
        #expect(!text.standardOutput.contains(someRPI))
        #expect(try harness.ctl(["heard", "--since", "3w"]).status == 2)
        // Within the last hour nothing was heard (the sightings are yesterday's).
        #expect((try harness.json(["heard", "--since", "1h"]) as? [String: Any])?["sightings"] as? Int == 0)

        // config show asks gaend: the file it read and what it runs with.
        let shown = try harness.ctl(["config", "show"])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(shown.standardOutput.contains("read from \(config)"))
        #expect(shown.standardOutput.contains("region = CH\n"))
        #expect(shown.standardOutput.contains("index-url = \(index)\n"))
        // A reload: the region changes at once, the scan window waits for a restart, and says so.
        try "region = DE\nscan-window = 8\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("the new region") { try harness.status()["region"] as? String == "DE" }
        try SchemaCheck.expect(try harness.ctl(["config", "show", "--json"]).standardOutput, matches: "config")
        try SchemaCheck.expect(try harness.ctl(["config", "show", "--json", "--config", config]).standardOutput, matches: "config")
        let reloaded = try #require(try harness.json(["config", "show"]) as? [String: Any])
        #expect(reloaded["file"] as? String == config)
        #expect(reloaded["restart_pending"] as? [String] == ["scan_window"])
        let values = try #require(reloaded["values"] as? [String: Any])
        #expect(values["region"] as? String == "DE")
        #expect(values["scan_window"] as? Int == 4)
        #expect(values["export_key"] as? [String] == ["310:v1:\(pem)"])
        #expect(try harness.ctl(["config", "show"]).standardOutput.contains("after a restart: scan-window"))
        #expect(harness.stderr.contains("these keys take effect at restart"))

        // status: the key server, and when it last answered (after a detection).
        #expect(try harness.status()["key_server"] as? String == index)
        #expect(try harness.status()["last_download_time"] is NSNull)
        let detected = try harness.ctl(["detect", "--json"])
        #expect(detected.status == 0, "\(detected.standardError)")
        try SchemaCheck.expect(detected.standardOutput, matches: "detection")
        let downloaded = try #require(try harness.status()["last_download_time"] as? Int)
        try SchemaCheck.expect(try harness.ctl(["status", "--json"]).standardOutput, matches: "status")
        #expect(abs(Int64(downloaded) - SystemWallClock().now().seconds) < 600)
        let status = try harness.ctl(["status"]).standardOutput
        #expect(status.contains("\tKeyServer: \(index)\n"))
        #expect(status.contains("\tLastDownloadTime: \(ISO8601.format(UnixTime(seconds: Int64(downloaded))))\n"))
        // Without a radio nothing is on the air: the advertising details are left out.
        #expect(!status.contains("RPIInterval"))
        #expect(try harness.status()["rpi_interval"] is NSNull)
        harness.stop()
        _ = server
    }

    /// A configuration error names the file and the line, in gaend and in `config show --config`.
    @Test func configurationErrorsNameTheFileAndLine() throws {
        let files = try TemporaryDirectory()
        let config = "\(files.path)/bad.conf"
        try "# a comment\nregion = CH\nscan-window = soon\n".write(toFile: config, atomically: true, encoding: .utf8)
        let shown = try ToolRunner.run("gaenctl", ["config", "show", "--config", config])
        #expect(shown.status == 1)
        #expect(shown.standardError.contains("\(config):3: scan-window: "), "\(shown.standardError)")
        let daemon = try ToolRunner.run("gaend", ["--config", config, "--radio", "none", "--bus", "none", "--data-dir", "\(files.path)/data"])
        #expect(daemon.status == 2)
        #expect(daemon.standardError.contains("\(config):3: scan-window: "), "\(daemon.standardError)")
        // A line without `=` is named by its first word: the rest may be a secret.
        try "verification-api-key s3cret\n".write(toFile: config, atomically: true, encoding: .utf8)
        let noEquals = try ToolRunner.run("gaenctl", ["config", "show", "--config", config])
        #expect(noEquals.standardError.contains("\(config):1: verification-api-key: expected key = value"), "\(noEquals.standardError)")
        #expect(!noEquals.standardError.contains("s3cret"))
    }
}

/// The outputs whose look matters, on a real terminal (tmux) of a known width.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct TerminalOutputTests {
    @Test func heardDrawsBarsThatFitTheTerminal() async throws {
        let data = try OwnerViewDaemonTests.yesterdaysSightings(300, of: 60)
        let harness = try ManagerHarness(directory: data, ["--radio", "none"])
        let gaenctl = try ToolRunner.productsDirectory().appendingPathComponent("gaenctl").path
        let terminal = try TerminalFixture()
        for columns in [60, 120] {
            let screen = try terminal.screen(of: [gaenctl, "heard", "--since", "2d", "--bus", harness.bus.address], columns: columns, rows: 80)
            let text = screen.joined(separator: "\n")
            #expect(text.contains("300 sightings of 60 distinct RPIs"), "\(text)")
            // No line is wider than the terminal (so none wrapped), and the busiest hour's bar
            // takes the width that is left.
            #expect(screen.allSatisfy { $0.count <= columns }, "\(text)")
            let bars = screen.filter { $0.contains("█") }
            #expect(!bars.isEmpty)
            let longest = bars.map { $0.filter { $0 == "█" }.count }.max() ?? 0
            #expect(longest >= columns - 40, "\(text)")
            // Every hour of the two days has its row, the empty ones too.
            #expect(screen.filter { $0.range(of: #"^\d{4}-\d\d-\d\d \d\d:00 "#, options: .regularExpression) != nil }.count == 49)
        }
        // status on a terminal: the exposure answer first, each property on its own line.
        let status = try terminal.screen(of: [gaenctl, "status", "--bus", harness.bus.address], columns: 100, rows: 40)
        let properties = status.filter { $0.hasPrefix("\t") || $0.hasPrefix("        ") }
        #expect(properties.first?.contains("ExposureDays: none in the last 14 days") == true, "\(status)")
        #expect(status.contains { $0.contains("StatusReason: no radio is configured") })
        harness.stop()
    }
}
