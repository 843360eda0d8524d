// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing

/// A small tmpfs, mounted for a test and unmounted after: the disk that fills for real.
struct SmallFileSystem {
    let path: String

    /// `nil` (the caller skips) when tmpfs cannot be mounted here (not root).
    init?(at path: String, bytes: Int) {
        self.path = path
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { return nil }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", path]
        mount.standardError = FileHandle.nullDevice
        guard (try? mount.run()) != nil else { return nil }
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { return nil }
    }

    /// Writes zeros to `name` until the file system is full; the bytes written.
    func fill(_ name: String) -> Int {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let written = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { return total }
            total += written
        }
    }

    func unmount() {
        let umount = Process()
        umount.executableURL = URL(fileURLWithPath: "/bin/umount")
        umount.arguments = ["-l", path]
        try? umount.run()
        umount.waitUntilExit()
    }
}

/// Issue 40, item 4, on the release gaend: a data directory on a 1 MB tmpfs that fills while gaend
/// writes scan windows. A failed append is cut back to the last whole record, counted and warned
/// of once; when space returns the appends are whole again, and the log verifies on its grid.
/// Before, the partial record stayed and every later record of the day was off the grid.
@Suite(.ownThreads, .timeLimit(.minutes(2)))
struct DiskFullLogTests {
    @Test func aFullDiskCutsTheFailedAppendAndTheLogStaysWhole() async throws {
        guard ProcessInfo.processInfo.environment["GAEND_PRODUCTS_DIR"] != nil else {
            print("skipped: the disk-full case runs the release binaries (GAEND_PRODUCTS_DIR)")
            return
        }
        let directory = try TemporaryDirectory()
        guard let disk = SmallFileSystem(at: directory.path + "/small", bytes: 1 << 20) else {
            print("skipped: a tmpfs cannot be mounted here (needs root)")
            return
        }
        defer { disk.unmount() }
        let socket = directory.path + "/flood.sock"
        // Paced (2 chunks of 2,000 reports a second): a steady radio, not a load on the two cores
        // that the other suites share (at full rate for a minute it starved them in CI).
        let flood = try await ReportFlood(rpis: 40, seconds: 110, chunksPerSecond: 2, socket: socket)
        defer { flood.stop() }
        let harness = try ManagerHarness(
            directory: directory,
            ["--data-dir", disk.path + "/data", "--radio", "h4+unix:\(socket)", "--scan-window", "1", "--scan-interval", "1-1", "--enable", "true"])
        defer { _ = harness.stop() }
        let data = disk.path + "/data"
        func verify() throws -> (intact: Bool, aggregates: Int, text: String) {
            let run = try ToolRunner.run("gaenctl", ["tools", "log", "verify", "--data-dir", data, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
            let segments = object?["segments"] as? [[String: Any]] ?? []
            return (
                !segments.isEmpty && segments.allSatisfy { $0["intact"] as? Bool == true },
                segments.reduce(0) { $0 + ($1["aggregates"] as? Int ?? 0) }, run.standardOutput
            )
        }
        // Polled by the segments' sizes (cheap); verified with gaenctl once, at the end.
        func logBytes() -> Int64 {
            let contacts = data + "/contacts"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: contacts)) ?? []
            return names.filter { $0.hasSuffix(".log") }.reduce(0) { $0 + ((try? AtomicFile.size(of: contacts + "/" + $1)) ?? 0) }
        }
        try await eventually("a window written") { logBytes() > 48 }

        let filled = disk.fill("filler")
        try await eventually("an append that failed", within: .seconds(30)) { harness.stderr.contains("contact log append failed") }
        unlink(disk.path + "/filler")
        try await eventually("appends whole again", within: .seconds(30)) { harness.stderr.contains("contact log appends whole again") }
        let before = logBytes()
        try await eventually("windows after the full disk") { logBytes() > before }
        #expect(harness.stop() == .success)
        let after = try verify()
        #expect(after.intact, "\(after.text)")
        let warnings = harness.stderr.split(separator: "\n").filter { $0.contains("contact log append failed") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("records.lost=") == true)
        print("disk full on a 1 MB tmpfs (\(filled) bytes of filler): \(after.aggregates) aggregates verified on the grid after space returned")
    }
}

/// Issue 40, item 16 (disk-full warnings), on the release gaend with its data directory on a full
/// 1 MB tmpfs: `detect`, `test-result add` and `disable` fail, and each says why at warning level
/// or above in the journal; the failed detection is in LastDetectionError. Before, the journal had
/// nothing at warning level and LastDetectionError stayed empty.
@Suite(.ownThreads, .timeLimit(.minutes(2)))
struct DiskFullActionsTests {
    @Test func actionsOnAFullDiskSayWhy() async throws {
        let directory = try TemporaryDirectory()
        guard let disk = SmallFileSystem(at: directory.path + "/small", bytes: 1 << 20) else {
            print("skipped: a tmpfs cannot be mounted here (needs root)")
            return
        }
        defer { disk.unmount() }
        let data = DataDirectory(path: disk.path + "/data")
        let day = UTCDay(containing: SystemWallClock().now()).advanced(by: -2)
        let pem = directory.path + "/export.pem"
        let planted = try await PlantedExposure(data: data, pemPath: pem, tek: Bytes16(words: (0xA1A2, 0xA3A4)), day: day)
        defer { withExtendedLifetime(planted) {} }
        let harness = try ManagerHarness(
            directory: directory,
            [
                "--data-dir", data.path, "--radio", "none", "--index-url", planted.server.baseURL + "/index.txt", "--export-key", "310:v1:\(pem)",
                "--enable", "true",
            ])
        defer { _ = harness.stop() }
        _ = disk.fill("filler")
        let today = "\(UTCDay(containing: SystemWallClock().now()))"

        let detect = try harness.ctl(["detect"])
        #expect(detect.status != 0, "\(detect.standardOutput)")
        let error = try harness.status()["last_detection_error"] as? String ?? ""
        #expect(error.contains("No space left on device"), "\(error)")
        let added = try harness.ctl(["test-result", "add", "--date", today, "--type", "confirmed"])
        #expect(added.status != 0)
        let disabled = try harness.ctl(["disable"])
        #expect(disabled.status != 0)
        #expect(harness.stop() == .success)
        let loud = harness.stderr.split(separator: "\n").filter { $0.contains(" warning ") || $0.contains(" error ") || $0.contains(" critical ") }
        #expect(loud.contains { $0.contains("exposure detection failed") && $0.contains("No space left on device") }, "\(harness.stderr)")
        #expect(loud.contains { $0.contains("AddTestResult failed") && $0.contains("No space left on device") }, "\(harness.stderr)")
        #expect(loud.contains { $0.contains("SetEnabled failed") && $0.contains("No space left on device") }, "\(harness.stderr)")
    }
}
