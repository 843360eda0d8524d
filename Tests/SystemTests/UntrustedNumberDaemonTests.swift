// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Foundation
import GaendTestSupport
import Glibc
import Testing

/// Numbers gaend gets from outside: Manager1 arguments, the configuration (options, file, SIGHUP)
/// and its own state file. None may stop the daemon; each is refused with the usual error that
/// names what was wrong.
@Suite(.ownThreads, .timeLimit(.minutes(4)))
struct UntrustedNumberDaemonTests {
    /// Seconds whose milliseconds pass Int64, seconds past Int64 itself, and the largest uint64:
    /// once each multiplied by 1000 and killed the daemon with SIGILL.
    static let timesNoCalendarHolds: [UInt64] = [9_223_372_036_854_776, UInt64(Int64.max), UInt64.max]

    @Test func addTestResultRefusesTimesNoCalendarHolds() async throws {
        let harness = try ManagerHarness(["--radio", "none"])
        let client = try await DBusConnection.bus(address: harness.bus.address)
        func add(_ fields: [String: DBusValue]) async -> DBusError? {
            do {
                _ = try await client.call(
                    destination: "org.gaend", path: "/org/gaend/Manager", interface: "org.gaend.Manager1", member: "AddTestResult", [.properties(fields)])
                return nil
            } catch {
                return error as? DBusError
            }
        }
        let now = UInt64(time(nil))
        for seconds in Self.timesNoCalendarHolds {
            let date = await add(["TestDate": .uint64(seconds), "Type": .string("confirmed")])
            #expect(date?.name.rawValue == "org.gaend.Error.BadParameter", "TestDate \(seconds)")
            #expect(date?.message.hasPrefix("TestDate:") == true, "\(date?.message ?? "no error")")
            let onset = await add(["TestDate": .uint64(now), "Type": .string("confirmed"), "SymptomOnset": .uint64(seconds)])
            #expect(onset?.name.rawValue == "org.gaend.Error.BadParameter", "SymptomOnset \(seconds)")
            #expect(onset?.message.hasPrefix("SymptomOnset:") == true, "\(onset?.message ?? "no error")")
        }
        #expect(harness.daemon.isRunning, "gaend died:\n\(harness.stderr.suffix(2000))")
        // Nothing was stored.
        #expect((try harness.json(["test-result", "list"]) as? [Any])?.isEmpty == true)
    }

    @Test func anOwnerFileWithTimesNoCalendarHoldsStillStarts() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/data", withIntermediateDirectories: true)
        let now = Int64(time(nil))
        // A damaged owner.json: one good test result, one whose date is no time, one whose onset
        // is none; the pre-authorization time is none either.
        let owner = """
            {"authorization": "authorized", "enabled": false, "pre_authorized_at": 9223372036854775807, "test_results": [
             {"id": "good", "test_date": \(now), "type": "confirmed", "added": \(now), "shared": false},
             {"id": "no-date", "test_date": 9223372036854775807, "type": "confirmed", "added": \(now), "shared": false},
             {"id": "no-onset", "test_date": \(now), "type": "likely", "added": \(now), "symptom_onset": -9223372036854775808, "shared": false}]}
            """
        try owner.write(toFile: directory.path + "/data/owner.json", atomically: true, encoding: .utf8)
        let harness = try ManagerHarness(directory: directory, ["--radio", "none"])
        let results = try harness.json(["test-result", "list"]) as? [[String: Any]] ?? []
        #expect(results.map { $0["id"] as? String } == ["good", "no-onset"])
        #expect(results.last?["symptom_onset"] == nil)
        // A pre-authorization whose time cannot be read is no pre-authorization.
        #expect(try harness.ctl(["preauthorize", "--request"]).status == 4)
    }

    @Test func aRangeWithoutItsNumbersExitsTwoNamingTheKey() throws {
        let directory = try TemporaryDirectory()
        let data = ["--radio", "none", "--bus", "none", "--data-dir", directory.path + "/data"]
        // `-600` would otherwise read as 600 and `5-` as 5; the limit ends a daemon that started.
        for (key, value) in [
            ("rotation-interval", "-"), ("rotation-interval", ""), ("scan-interval", "-"), ("rotation-interval", "-600"), ("scan-interval", "5-"),
        ] {
            // `--key=-600`: as a separate argument, argument-parser takes `-600` for an option.
            let option = value.count > 1 && value.hasPrefix("-") ? ["--\(key)=\(value)"] : ["--\(key)", value]
            let run = try ToolRunner.run("gaend", option + data, limit: 15)
            #expect(run.status == 2, "--\(key)=\(value): \(run.standardError)")
            #expect(run.standardError.contains("\(key): '\(value)'"), "\(run.standardError)")
        }
        let config = directory.path + "/gaend.conf"
        try "rotation-interval =\n".write(toFile: config, atomically: true, encoding: .utf8)
        let empty = try ToolRunner.run("gaend", ["--config", config] + data, limit: 15)
        #expect(empty.status == 2)
        #expect(empty.standardError.contains("rotation-interval: ''"), "\(empty.standardError)")
        try "scan-interval = -\n".write(toFile: config, atomically: true, encoding: .utf8)
        let fromFile = try ToolRunner.run("gaend", ["--config", config] + data, limit: 15)
        #expect(fromFile.status == 2)
        #expect(fromFile.standardError.contains("scan-interval: '-'"), "\(fromFile.standardError)")
        // gaenctl reads the same file: the file is wrong, not its argument (docs/gaenctl.md).
        let shown = try ToolRunner.run("gaenctl", ["config", "show", "--config", config])
        #expect(shown.status == 1)
        #expect(shown.standardError.contains("scan-interval: '-'"), "\(shown.standardError)")
    }

    @Test func aBadRangeOnReloadKeepsTheRunningConfiguration() throws {
        let files = try TemporaryDirectory()
        let config = files.path + "/gaend.conf"
        try "region = CH\n".write(toFile: config, atomically: true, encoding: .utf8)
        let harness = try ManagerHarness(["--config", config, "--radio", "none"])
        try "region = DE\nscan-interval = -\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(harness.daemon.processIdentifier, SIGHUP)
        try eventually("the reload's refusal in the log") { harness.stderr.contains("configuration not reloaded") || !harness.daemon.isRunning }
        #expect(harness.daemon.isRunning, "gaend died on SIGHUP:\n\(harness.stderr.suffix(2000))")
        #expect(harness.stderr.contains("scan-interval: '-'"))
        #expect(try harness.status()["region"] as? String == "CH")
        #expect(harness.stop() == .success)
    }
}
