// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
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

    /// Issue 46 on the release binaries: a key file signed by a key gaend does not trust is refused
    /// by name in `gaenctl detect` (exit 1, never "no exposure"), LastDetectionError, StatusReason
    /// and the journal; it is not marked processed, so once the right key is configured the next
    /// run matches it and the exposure is found.
    @Test func aRefusedFileIsToldAndMatchedOnceTheKeyIsRight() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x6162_6364_6566_6768)
        defer { withExtendedLifetime(planted) {} }
        // Another key under the same id and version: the authority rotated it, or a typo.
        let wrong = directory.path + "/wrong.pem"
        try ECDSAPrivateKey().publicKeyPEM.write(toFile: wrong, atomically: true, encoding: .utf8)
        let wrongArguments = arguments.map { $0.hasPrefix("310:v1:") ? "310:v1:\(wrong)" : $0 }
        var harness = try ManagerHarness(directory: directory, wrongArguments)
        let refused = try harness.ctl(["detect"])
        #expect(refused.status == 1, "\(refused.standardOutput)")
        #expect(refused.standardOutput.hasPrefix("not fully checked: no exposure found, but 1 key file was refused"), "\(refused.standardOutput)")
        #expect(refused.standardOutput.contains("1 of 1 key file refused; their keys were not checked:\n"), "\(refused.standardOutput)")
        #expect(refused.standardOutput.contains("/1.zip: bad-signature"), "\(refused.standardOutput)")
        let error = try harness.ctl(["get", "LastDetectionError"]).standardOutput
        #expect(error.hasPrefix("1 of 1 key file refused: bad-signature ("), "\(error)")
        let reason = try harness.ctl(["get", "StatusReason"]).standardOutput
        #expect(reason.contains("the last detection: 1 of 1 key file refused: bad-signature"), "\(reason)")
        try await eventually("the journal's warning") { harness.stderr.contains("key file refused: its keys were not checked") }
        #expect(harness.stop() == .success)

        harness = try ManagerHarness(directory: directory, arguments)
        let matched = try harness.ctl(["detect"])
        #expect(matched.status == 0, "\(matched.standardOutput)")
        #expect(matched.standardOutput.contains("exposure on \(day)"), "\(matched.standardOutput)")
        #expect(!(try harness.ctl(["get", "LastDetectionError"]).standardOutput.contains("refused")))
        #expect(harness.stop() == .success)
    }

    /// Issue 53, item 7, on the release binaries: FIFOs in place of every state file the owner's
    /// answer depends on. gaend reached the bus and its detection ended (it hung on the first read
    /// before, and ignored SIGTERM); each FIFO is set aside, and the exposure is found.
    @Test func fifosInPlaceOfStateFilesAreSetAside() async throws {
        let directory = try TemporaryDirectory()
        let (day, arguments, planted) = try await ExposureHookDaemonTests.planted(directory, daysAgo: 2, seed: 0x8182_8384_8586_8788)
        defer { withExtendedLifetime(planted) {} }
        let data = directory.path + "/data"
        let names = ["owner.json", "detection-state.json", "exposure-results.json", "processed-key-files", "detection-budget"]
        for name in names { #expect(mkfifo(data + "/" + name, 0o600) == 0, "\(name)") }
        let harness = try ManagerHarness(directory: directory, arguments)
        let detected = try harness.ctl(["detect"])
        #expect(detected.status == 0, "\(detected.standardError)")
        #expect(detected.standardOutput.contains("exposure on \(day)"), "\(detected.standardOutput)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: data)
        for name in names {
            #expect(entries.contains { $0.hasPrefix(name + ".not-a-file-") }, "\(name): \(entries)")
        }
        #expect(harness.stop() == .success)
    }
}
