// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing

/// The exposure hook on the release gaend: told once of a planted exposure (variables and JSON),
/// told when the last exposure goes, killed at its limit without holding detection up, and
/// refused by name when it is not an executable file.
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct ExposureHookDaemonTests {
    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// An exposure `daysAgo` in a new data directory, and the arguments of a gaend that finds it.
    static func planted(_ directory: TemporaryDirectory, daysAgo: Int64, seed: UInt64) async throws -> (
        day: UTCDay, arguments: [String], server: PlantedExposure
    ) {
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -daysAgo)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(
            data: DataDirectory(path: directory.path + "/data"), pemPath: pem, tek: Bytes16(words: (seed, ~seed)), day: day, region: "CH")
        let arguments = ["--radio", "none", "--index-url", planted.server.baseURL + "/index.txt", "--export-key", "310:v1:\(pem)", "--enable", "true"]
        return (day, arguments, planted)
    }

    @Test func aNewExposureIsToldOnceAndItsEndToo() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await Self.planted(directory, daysAgo: 2, seed: 0x1112_1314_1516_1718)
        defer { withExtendedLifetime(planted) {} }
        let runs = directory.path + "/runs"
        let hook = try directory.writeScript(
            "hook",
            "echo \"$GAEND_EVENT $GAEND_NEW_DAYS|$GAEND_EXPOSURE_DAYS\" >> '\(runs)'\nenv > '\(runs).env'\ncat > '\(runs).json'\necho \"told: $GAEND_EVENT\"")
        let harness = try ManagerHarness(directory: directory, arguments + ["--exposure-hook", hook])
        #expect(try harness.ctl(["detect"]).status == 0)
        // Read once it has exited: the journal says so.
        try await eventually("the hook's run") { harness.stderr.contains("exposure hook ran") }
        #expect(Self.lines(runs) == ["exposed \(day)|\(day)"])
        // Only its own variables (and what the shell sets itself): no PATH, no HOME, nothing of gaend's.
        let environment = Self.lines(runs + ".env").filter {
            !$0.hasPrefix("GAEND_") && !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=")
        }
        #expect(environment.isEmpty, "\(environment)")
        let text = try String(contentsOfFile: runs + ".json", encoding: .utf8)
        try SchemaCheck.expect(text, matches: "exposure-hook")
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(json?["event"] as? String == "exposed")
        #expect(json?["new_days"] as? [String] == [day.description])
        #expect(json?["last_exposure"] as? Int64 == day.start.seconds + 9 * 3600)
        #expect(harness.stderr.contains("output=told: exposed"))

        // A run with nothing new tells nothing; the exposure gone (here by ResetAllData) is told:
        // the second line is the end, not the same exposure again.
        #expect(try harness.ctl(["detect"]).status == 0)
        #expect(try harness.ctl(["reset", "--yes"]).status == 0)
        try await eventually("the end told") { Self.lines(runs).count == 2 }
        #expect(Self.lines(runs).last == "cleared |")
        #expect(harness.stop() == .success)
    }

    @Test func aHangingHookIsKilledAtItsLimitAndDetectionAnswers() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await Self.planted(directory, daysAgo: 3, seed: 0x2122_2324_2526_2728)
        defer { withExtendedLifetime(planted) {} }
        let hook = try directory.writeScript("hook", "exec /bin/sleep 600")
        let harness = try ManagerHarness(directory: directory, arguments + ["--exposure-hook", hook, "--exposure-hook-timeout", "1"])
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0)
        #expect(detected.standardOutput.contains("exposure on \(day)"))
        try await eventually("the kill") { harness.stderr.contains("exposure hook killed: it ran past its time limit") }
        #expect(try harness.ctl(["status"]).status == 0)
        #expect(harness.stop() == .success)
    }

    @Test func aHookThatIsNotAnExecutableFileIsRefusedByName() async throws {
        let directory = try TemporaryDirectory()
        let plain = directory.path + "/plain"
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: plain))
        let start = try ToolRunner.run(
            "gaend", ["--radio", "none", "--bus", "none", "--data-dir", directory.path + "/data", "--exposure-hook", plain], limit: 30)
        #expect(start.status == 2)
        #expect(start.standardError.contains("exposure-hook: \(plain) is not an executable file"), "\(start.standardError)")
        let relative = try ToolRunner.run("gaend", ["--radio", "none", "--bus", "none", "--exposure-hook", "hook.sh"], limit: 30)
        #expect(relative.status == 2)
        #expect(relative.standardError.contains("exposure-hook"), "\(relative.standardError)")

        // At a reload: a warning, and the running gaend goes on.
        let good = try directory.writeScript("good", "exit 0")
        let configuration = directory.path + "/gaend.conf"
        try "exposure-hook = \(good)\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let harness = try ManagerHarness(directory: directory, ["--config", configuration, "--radio", "none"])
        try "exposure-hook = \(plain)\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("the reload's warning") { harness.stderr.contains("exposure-hook not applied; the previous one stays") }
        #expect(try harness.ctl(["status"]).status == 0)
        #expect(harness.stop() == .success)
    }

    /// Issue 40, item 12: a hook that someone else could change is refused at start (exit 2,
    /// naming the path and why) and at a reload (a warning; the previous hook stays).
    @Test func aHookOthersCouldChangeIsRefusedAtStartAndReload() async throws {
        let directory = try TemporaryDirectory()
        chmod(directory.path, 0o755)
        let writable = try directory.writeScript("writable", "exit 0")
        chmod(writable, 0o777)
        let start = try ToolRunner.run(
            "gaend", ["--radio", "none", "--bus", "none", "--data-dir", directory.path + "/data", "--exposure-hook", writable], limit: 30)
        #expect(start.status == 2)
        #expect(start.standardError.contains("exposure-hook: \(writable) (the hook) is writable by anyone (mode 777)"), "\(start.standardError)")

        let good = try directory.writeScript("good", "exit 0")
        chmod(good, 0o755)
        let configuration = directory.path + "/gaend.conf"
        try "exposure-hook = \(good)\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let harness = try ManagerHarness(directory: directory, ["--config", configuration, "--radio", "none"])
        try "exposure-hook = \(writable)\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        kill(harness.daemon.processIdentifier, SIGHUP)
        try await eventually("the reload's warning") { harness.stderr.contains("writable by anyone") }
        #expect(harness.stderr.contains("exposure-hook not applied; the previous one stays"))
        #expect(harness.stop() == .success)
    }
}
