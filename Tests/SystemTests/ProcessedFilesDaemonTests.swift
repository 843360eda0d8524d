// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing

/// Issue 40, items 8 and 15, on the release binaries: a `processed-key-files` past gaend's read
/// limit (an earlier version wrote it under a hostile index) no longer fails every detection, and
/// gaenctl tells a gaend that is on the bus but does not answer ("busy", exit 5) from one that is
/// not there ("not running", exit 3).
@Suite(.ownThreads, .timeLimit(.minutes(3)))
struct ProcessedFilesDaemonTests {
    @Test func anOverlongProcessedFileStillLetsDetectionRun() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x5152_5354_5556_5758)
        defer { withExtendedLifetime(planted) {} }
        let data = DataDirectory(path: directory.path + "/data")
        let now = SystemWallClock().now().seconds
        let long = "https://keys.example/" + String(repeating: "b", count: 1_000)
        let text = (0..<20_000).map { "\(now - 3600 + Int64($0) / 100)\t\(long)/\($0).zip\n" }.joined()
        try AtomicFile.write(Array(text.utf8), to: data.path(of: "processed-key-files"))
        let harness = try ManagerHarness(directory: directory, arguments)
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0, "\(detected.standardError)")
        #expect(detected.standardOutput.contains("exposure on \(day)"), "\(detected.standardOutput)")
        #expect(try AtomicFile.size(of: data.path(of: "processed-key-files")) <= 12 << 20)
        #expect(harness.stop() == .success)
    }

    @Test func aStoppedDaemonIsBusyAndAGoneOneIsNotRunning() throws {
        let harness = try ManagerHarness(["--radio", "none"])
        let pid = harness.gaendProcess
        kill(pid, SIGSTOP)
        let busy = try harness.ctl(["status", "--timeout", "2"])
        kill(pid, SIGCONT)
        #expect(busy.status == 5, "\(busy.standardError)")
        #expect(busy.standardError.contains("busy"), "\(busy.standardError)")
        #expect(try harness.ctl(["status", "--timeout", "2"]).status == 0)
        #expect(harness.stop() == .success)
        let gone = try harness.ctl(["status", "--timeout", "2"])
        #expect(gone.status == 3, "\(gone.standardError)")
        #expect(gone.standardError.contains("not running"), "\(gone.standardError)")
        #expect(try harness.ctl(["status", "--timeout", "0"]).status == 2)
    }
}
