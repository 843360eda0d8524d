// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Glibc
import SystemCalls
import Testing

/// The release gaend on a wrong clock, set with Debian's libfaketime (LD_PRELOAD): a wrong date at
/// start deletes nothing when the kernel is not synchronized, and a clock 3 hours behind the key
/// server on loopback refuses detection and sharing, naming the offset.
///
/// Not under the sanitizers: libfaketime preloaded ahead of their runtime left the ASan gaend
/// hung, deaf to SIGTERM (the sanitized suites run on the sanitized build, not the release one).
@Suite(.ownThreads, .timeLimit(.minutes(3)), .enabled(if: !BuildUnderTest.isSanitized, "libfaketime cannot be preloaded ahead of a sanitizer's runtime"))
struct ClockDaemonTests {
    static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

    /// libfaketime's environment for an offset such as `+400d` (the monotonic clocks left alone).
    static func faked(_ offset: String) -> [String: String] {
        ["LD_PRELOAD": library, "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"]
    }

    /// gaend exec'd by timeout(1), which passes SIGTERM on: started directly with libfaketime
    /// preloaded, gaend saw no command line at all (its data directory became /var/lib/gaend);
    /// through a program that loaded libfaketime first, it sees its own. (faketime(1) forks and
    /// does not pass SIGTERM on.)
    static let launcher = ["/usr/bin/timeout", "170"]

    static func segments(_ data: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: data + "/contacts")) ?? []).filter { $0.hasSuffix(".log") }.sorted()
    }

    @Test func aStartFourHundredDaysAheadDeletesNothingOnAnUnsynchronizedKernel() throws {
        guard FileManager.default.fileExists(atPath: Self.library) else {
            Issue.record("libfaketime is not installed (Debian's faketime; make deps installs it)")
            return
        }
        guard !KernelClock.synchronization().synchronized else {
            // The case under test is the offline wearable's: a synchronized kernel vouches for its clock.
            print("ClockDaemonTests: skipped: this machine's kernel clock is synchronized")
            return
        }
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let appended = try ToolRunner.run(
            "gaenctl", ["tools", "log", "append", "--data-dir", data, "--aggregates", "300", "--days", "3", "--per-window", "100"])
        #expect(appended.status == 0)
        let before = Self.segments(data)
        #expect(before.count == 3)

        // clock = synchronized (the default), the wall clock 400 days ahead as a wrong RTC date would set it.
        let harness = try ManagerHarness(
            environment: Self.faked("+400d"), directory: directory, launcher: Self.launcher, ["--radio", "none", "--clock", "synchronized"])
        #expect(Self.segments(data) == before)
        let status = try harness.status()
        #expect(status["clock_trusted"] as? Bool == false)
        #expect(try harness.ctl(["status"]).standardOutput.contains("ClockTrusted: no"))
        #expect(harness.stop()?.status == 0)
        #expect(harness.stderr.contains("contact log retention held until the clock is trusted"))
        #expect(Self.segments(data) == before)

        // The owner vouching for the same clock (clock = system): it is real time that passed, and
        // the three days are past the retention. (The case above can fail.)
        let vouched = try ManagerHarness(
            environment: Self.faked("+400d"), directory: directory, launcher: Self.launcher, ["--radio", "none", "--clock", "system"])
        #expect(Self.segments(data).isEmpty)
        vouched.stop()
    }

    @Test func aClockThreeHoursBehindTheKeyServerRefusesDetectionAndSharing() throws {
        guard FileManager.default.fileExists(atPath: Self.library) else {
            Issue.record("libfaketime is not installed (Debian's faketime; make deps installs it)")
            return
        }
        let files = try TemporaryDirectory()
        for name in ["verification", "export"] {
            let made = try ToolRunner.run("gaen-keyserver", ["make-key", "--out", "\(files.path)/\(name).pem"])
            try made.standardOutput.write(toFile: "\(files.path)/\(name).pub.pem", atomically: true, encoding: .utf8)
        }
        let (server, port) = try ShareLoopTests.startServer(
            [
                "--data-dir", files.path + "/server", "--verification-key", files.path + "/verification.pem", "--export-key", files.path + "/export.pem",
                "--key-id", "310:v1", "--region", "CH", "--health-authority", "ch.example", "--device-api-key", "device-key",
            ], output: files.path + "/server.out")
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let base = "http://127.0.0.1:\(port)"
        // 3 h 0 min 30 s behind: the server's Date is whole seconds.
        let harness = try ManagerHarness(
            environment: Self.faked("-10830"), launcher: Self.launcher,
            [
                "--clock", "system", "--radio", "none", "--enable", "true", "--verification-url", base, "--verification-api-key", "device-key",
                "--publish-url", base + "/v1/publish", "--health-authority-id", "ch.example", "--index-url", base + "/exports/exposureKeyExport-CH/index.txt",
                "--export-key", "310:v1:\(files.path)/export.pub.pem",
            ])
        // Before any answer the owner's word stands: a test result is recorded.
        #expect(try harness.status()["clock_trusted"] as? Bool == true)
        let today = String(Output.time(UInt64(Date().timeIntervalSince1970) - 10_830).prefix(10))
        let added = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed"])
        #expect(added.status == 0)
        let id = added.standardOutput.trimmingCharacters(in: .newlines)

        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 1)
        #expect(detected.standardError.contains("ClockUntrusted"), "\(detected.standardError)")
        #expect(detected.standardError.contains("the clock is 3 h 0 min behind the key server"), "\(detected.standardError)")
        #expect(try harness.ctl(["get", "LastDetectionError"]).standardOutput.contains("3 h 0 min behind the key server"))
        let status = try harness.status()
        #expect(status["clock_trusted"] as? Bool == false)
        // 3 h 0 min 30 s, less the fraction of a second the Date drops, less the answer's transit.
        let offset = status["clock_offset"] as? Int ?? 0
        #expect((10_828_000...10_830_500).contains(offset), "ClockOffset \(offset)")
        #expect(try harness.ctl(["status"]).standardOutput.contains("ClockTrusted: no (3 h 0 min behind the key server)"))

        let shared = try harness.ctl(["share", "--test-result", id, "--code", "12345678"])
        #expect(shared.status == 1)
        #expect(shared.standardError.contains("ClockUntrusted: not while the clock is not trusted: the clock is 3 h 0 min behind the key server"))
        #expect(try harness.ctl(["keys"]).standardError.contains("ClockUntrusted"))
        #expect(harness.stop()?.status == 0)
    }
}
