// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Glibc
import Storage
import SystemCalls
import Testing

/// Issue 40, item 3, on the release gaend: a held-sightings file of this boot whose middle entry
/// the reader refuses (an earlier gaend wrote it over the bound, under a flood) keeps the entries
/// after it. Before, the refused entry was taken for a damaged tail and the later windows went.
@Suite(.ownThreads, .timeLimit(.minutes(2)))
struct HeldSightingsDaemonTests {
    static func aggregate(_ number: Int, at time: UnixTime) -> ContactAggregate {
        var rssi = RSSISummary()
        rssi.add(-60)
        let rpi = Bytes16(words: (UInt64(number) &+ 0x0101_0101, 0x7777_0000_0000_0000 | UInt64(number)))
        return ContactAggregate(
            rpi: RollingProximityIdentifier(rpi), aem: AssociatedEncryptedMetadata((1, 2, 3, 4)), firstSeen: time, lastSeen: time.adding(seconds: 1),
            reports: 1, rssi: rssi, previousScanEnd: nil)
    }

    static func entry(at time: UnixTime, aggregates count: Int) -> HeldFormat.Entry {
        HeldFormat.Entry(
            window: ScanWindowRecord(
                start: time, end: time.adding(seconds: 4), reports: UInt32(count), exposureNotificationReports: UInt32(count), aggregates: UInt32(count),
                previousScanEnd: nil, monotonicMilliseconds: 4000),
            aggregates: (0..<count).map { aggregate($0, at: time) })
    }

    @Test func aRefusedHeldEntryKeepsTheWindowsAfterIt() async throws {
        let boot = try #require(KernelClock.bootID(), "this machine has no boot id")
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        _ = try data.prepare()
        // Boot-clock times of the last few minutes, as an untrusted clock's windows are held.
        let now = UnixTime(milliseconds: KernelClock.bootMilliseconds())
        let entries = [
            Self.entry(at: now.adding(seconds: -180), aggregates: 1),
            Self.entry(at: now.adding(seconds: -120), aggregates: HeldFormat.maximumAggregates + 1),
            Self.entry(at: now.adding(seconds: -60), aggregates: 2),
        ]
        try AtomicFile.write(HeldFormat.header(bootID: boot) + entries.flatMap(HeldFormat.encode), to: data.path(of: HeldSightings.fileName))
        let harness = try ManagerHarness(directory: directory, ["--radio", "none"])
        try await eventually("the held windows filed") { harness.stderr.contains("held sightings re-timed into the contact log") }
        #expect(harness.stop() == .success)
        #expect(harness.stderr.contains("windows=2"), "\(harness.stderr)")
        #expect(harness.stderr.contains("entries.skipped=1"), "\(harness.stderr)")
        let run = try ToolRunner.run("gaenctl", ["tools", "log", "stats", "--json", "--data-dir", data.path])
        let stats = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let days = stats?["days"] as? [[String: Any]] ?? []
        #expect(days.reduce(0) { $0 + ($1["aggregates"] as? Int ?? 0) } == 3, "\(run.standardOutput)")
    }

    /// Issue 40, item 16 (held sightings shown): on an untrusted clock (this machine's kernel
    /// clock is unsynchronized, so `--clock synchronized` does not trust it) status and `heard`
    /// show the sightings held. Before, both said 0 while thousands were held.
    @Test func heldSightingsAreShownWhileTheClockIsNotTrusted() async throws {
        let boot = try #require(KernelClock.bootID(), "this machine has no boot id")
        let directory = try TemporaryDirectory()
        let data = DataDirectory(path: directory.path + "/data")
        _ = try data.prepare()
        let now = UnixTime(milliseconds: KernelClock.bootMilliseconds())
        let entries = [Self.entry(at: now.adding(seconds: -120), aggregates: 1500), Self.entry(at: now.adding(seconds: -60), aggregates: 1500)]
        try AtomicFile.write(HeldFormat.header(bootID: boot) + entries.flatMap(HeldFormat.encode), to: data.path(of: HeldSightings.fileName))
        let harness = try ManagerHarness(directory: directory, ["--radio", "none", "--clock", "synchronized"])
        defer { _ = harness.stop() }
        guard try harness.status()["clock_trusted"] as? Bool == false else {
            print("skipped: this machine's kernel clock is synchronized, so the clock is trusted and nothing stays held")
            return
        }
        #expect(try harness.status()["held_sightings"] as? Int == 3000)
        #expect(try harness.ctl(["status"]).standardOutput.contains("\tHeldSightings: 3000\n"))
        let heard = try harness.ctl(["heard"]).standardOutput
        #expect(heard.contains("3000 more sightings held"), "\(heard)")
        #expect(harness.stop() == .success)
    }
}
