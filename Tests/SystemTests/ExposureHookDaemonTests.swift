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
        try await eventually("the kill") { harness.stderr.contains("exposure hook killed with its process group: it ran past its time limit") }
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

    /// Issue 40, item 7: a day is told only when the hook exited 0. A hook that fails (75,
    /// sendmail's EX_TEMPFAIL) leaves the day untold: the same news waits for its retry (a
    /// detection meanwhile does not run it again), and a restart tells it. Before, the day was
    /// saved as told before the run, and a failed hook never told the wearer.
    @Test func aFailedHookRunsAgainUntilItTells() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await Self.planted(directory, daysAgo: 2, seed: 0x6162_6364_6566_6768)
        defer { withExtendedLifetime(planted) {} }
        let runs = directory.path + "/runs"
        let failing = directory.path + "/failing"
        FileManager.default.createFile(atPath: failing, contents: Data("1".utf8))
        // Fails while the counter is above 0, counting down.
        let hook = try directory.writeScript(
            "hook",
            "left=$(cat '\(failing)')\necho \"$GAEND_EVENT $GAEND_NEW_DAYS $left\" >> '\(runs)'\n"
                + "if [ \"$left\" -gt 0 ]; then echo $((left - 1)) > '\(failing)'; echo mail server down; exit 75; fi\necho told")
        let harness = try ManagerHarness(directory: directory, arguments + ["--exposure-hook", hook])
        #expect(try harness.ctl(["detect"]).status == 0)
        try await eventually("the failed run") { harness.stderr.contains("exposure hook did not tell the owner") }
        #expect(harness.stderr.contains("retryIn=60.0 seconds"), "\(harness.stderr)")
        // Another detection (several looks) is not the retry.
        #expect(try harness.ctl(["detect"]).status == 0)
        #expect(harness.stop() == .success)
        #expect(Self.lines(runs) == ["exposed \(day) 1"], "\(harness.stderr)")
        // A restart, with the day still untold, tells it; then nothing more.
        let restarted = try ManagerHarness(bus: harness.bus, directory: directory, arguments + ["--exposure-hook", hook])
        try await eventually("the run after the restart", explain: { restarted.stderr }) { restarted.stderr.contains("exposure hook ran") }
        #expect(try restarted.ctl(["detect"]).status == 0)
        #expect(restarted.stop() == .success)
        #expect(Self.lines(runs) == ["exposed \(day) 1", "exposed \(day) 0"])
    }

    /// Issue 40, item 13: what a hook leaves behind neither delays its end nor costs gaend CPU. A
    /// hook that starts a long sleep and a writer that never stops, then exits 0, is logged as
    /// having run (status 0) at once, and gaend stays idle. Before, the end waited for the
    /// grandchild (here to the 5 s limit, logged as "ran past its time limit"), and the reader spun.
    @Test func whatAHookLeavesBehindDoesNotHoldGaend() async throws {
        let directory = try TemporaryDirectory()
        let (_, arguments, planted) = try await Self.planted(directory, daysAgo: 2, seed: 0x7172_7374_7576_7778)
        defer { withExtendedLifetime(planted) {} }
        let group = directory.path + "/group"
        let hook = try directory.writeScript(
            "hook", "echo told the owner\necho $$ > '\(group)'\nsleep 120 &\n(while :; do echo chatter; done) &\nexit 0")
        defer {
            if let text = try? String(contentsOfFile: group, encoding: .utf8), let leader = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(-leader, SIGKILL)
            }
        }
        let harness = try ManagerHarness(directory: directory, arguments + ["--exposure-hook", hook, "--exposure-hook-timeout", "5"])
        let started = ContinuousClock.now
        #expect(try harness.ctl(["detect"]).status == 0)
        try await eventually("the hook's end") { harness.stderr.contains("exposure hook ran") || harness.stderr.contains("exposure hook killed") }
        let ended = ContinuousClock.now - started
        #expect(harness.stderr.contains("exposure hook ran"), "\(harness.stderr)")
        #expect(harness.stderr.contains("output=told the owner"), "\(harness.stderr)")
        // Not timed: on CI's loaded cores a second is nothing; what tells is the line above,
        // which the old code wrote only at the 5 s limit ("killed").
        // Idle while the chatter goes on (or died of its closed socket).
        let before = FloodCapTests.cpuSeconds(of: harness.gaendProcess)
        try await Task.sleep(for: .seconds(3))
        let spent = FloodCapTests.cpuSeconds(of: harness.gaendProcess) - before
        #expect(spent < 0.5, "gaend spent \(spent) s of CPU in 3 s after the hook exited")
        print("hook with a sleeping and a chattering grandchild: end logged after \(ended); gaend CPU \(spent) s in the 3 s after")
        #expect(harness.stop() == .success)
    }
}
