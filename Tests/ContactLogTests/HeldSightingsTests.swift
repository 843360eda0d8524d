// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Storage
import Testing

@Suite(.ownThreads) struct HeldSightingsTests {
    static let boot = "0f6a1c9e-2d3b-4c5d-8e7f-123456789abc"
    /// Boot-clock times: ten minutes after boot.
    static let heard = UnixTime(milliseconds: 600_000)

    @Test func heldWindowsAreReTimedExactlyIntoTheLog() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        let first = window(at: Self.heard, aggregates: 1)
        let second = window(at: Self.heard.adding(seconds: 60), aggregates: 1, previous: first.end)
        try await held.hold(window: first, aggregates: [aggregate(1, at: Self.heard.adding(seconds: 1))])
        try await held.hold(window: second, aggregates: [aggregate(2, at: Self.heard.adding(seconds: 61), previous: first.end)])
        #expect(await held.count == (2, 2))
        #expect(try log.records().isEmpty, "nothing is filed on an untrusted clock")
        // Trusted at noon, when the boot clock read 20 minutes: boot time + offset is wall time.
        let offset = LogFixture.noon.milliseconds - 1_200_000
        let filed = try await held.release(adding: offset, into: writer)
        #expect(filed == (2, 2))
        let aggregates = try log.aggregates()
        #expect(aggregates.map(\.firstSeen) == [LogFixture.noon.adding(seconds: -599), LogFixture.noon.adding(seconds: -539)])
        #expect(aggregates[1].previousScanEnd == LogFixture.noon.adding(seconds: -596))
        #expect(await held.count == (0, 0))
        #expect(!FileManager.default.fileExists(atPath: held.path))
    }

    @Test func aRestartKeepsThemAndARebootDropsThemCounted() async throws {
        let log = try LogFixture()
        do {
            let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
            try await held.hold(window: window(at: Self.heard, aggregates: 1), aggregates: [aggregate(1, at: Self.heard)])
        }
        let again = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await again.count == (1, 1))
        #expect(await again.dropped == 0)
        let rebooted = try HeldSightings(dataDirectory: log.data, bootID: "11111111-2222-3333-4444-555555555555", logger: quietLogger)
        #expect(await rebooted.count == (0, 0))
        #expect(await rebooted.dropped == 1)
        #expect(!FileManager.default.fileExists(atPath: rebooted.path))
    }

    @Test func atMostADayIsHeldAndTheOldestGoCounted() async throws {
        let log = try LogFixture()
        let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        // A window every 10 minutes for 25 hours.
        for index in 0..<150 {
            let start = Self.heard.adding(seconds: Int64(index) * 600)
            try await held.hold(window: window(at: start, aggregates: 1), aggregates: [aggregate(index, at: start)])
        }
        let (windows, _) = await held.count
        let dropped = await held.dropped
        #expect(windows + dropped == 150)
        #expect(dropped >= 6, "25 hours held at most 24")
        #expect(windows * 600 <= 24 * 3600)
        // The file says the same after a restart.
        let again = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await again.count.windows == windows)
    }

    /// Issue 40, item 9: a flood on an untrusted clock grew the file and gaend's memory without a
    /// bound but time; the oldest windows now go past `maximumAggregates`, counted.
    @Test func atMostTheBoundOfAggregatesIsHeldAndTheOldestGoCounted() async throws {
        let log = try LogFixture()
        let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        // 4,000 aggregates a window, a window every 10 s: 40 windows are 160,000 aggregates.
        for index in 0..<40 {
            let start = Self.heard.adding(seconds: Int64(index) * 10)
            let aggregates = (0..<4000).map { aggregate(index * 4000 + $0, at: start) }
            try await held.hold(window: window(at: start, aggregates: 4000), aggregates: aggregates)
        }
        let (windows, aggregates) = await held.count
        #expect(aggregates <= HeldSightings.maximumAggregates)
        #expect(aggregates >= HeldSightings.maximumAggregates / 2)
        #expect(windows + (await held.dropped) == 40)
        // The newest are the ones kept, and the file says the same after a restart.
        let again = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await again.count.windows == windows)
        #expect(try AtomicFile.size(of: again.path) < 6_000_000)
    }

    /// A file gaend cannot read (here past the read limit) is dropped with a warning: the start
    /// goes on. It used to fail it (exit 1) at every restart.
    @Test func aFileTooLargeToReadNeverStopsTheStart() async throws {
        let log = try LogFixture()
        let path = log.data.path(of: HeldSightings.fileName)
        _ = try log.data.prepare()
        FileManager.default.createFile(atPath: path, contents: Data(HeldFormat.header(bootID: Self.boot)))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(HeldFormat.maximumFileSize) + 1)
        try handle.close()
        let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await held.count.windows == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aTornTailIsDroppedAndTheRestKept() async throws {
        let log = try LogFixture()
        do {
            let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
            for index in 0..<3 {
                let start = Self.heard.adding(seconds: Int64(index) * 60)
                try await held.hold(window: window(at: start, aggregates: 1), aggregates: [aggregate(index, at: start)])
            }
        }
        let path = log.data.path + "/" + HeldSightings.fileName
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 7).write(to: URL(fileURLWithPath: path))
        let again = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await again.count == (2, 2))
    }

    /// Issue 40, item 3: what `hold` writes reads back, and an entry the reader refuses (here one
    /// an earlier version wrote over the bound) is skipped, not taken as a damaged tail with every
    /// entry after it.
    @Test func aRefusedEntryKeepsTheOnesAfterItAndHoldWritesWhatReadsBack() async throws {
        let log = try LogFixture()
        let path = log.data.path + "/" + HeldSightings.fileName
        let over = HeldFormat.maximumAggregates + 2_000
        let start = Self.heard.adding(seconds: 60)
        let oversized = HeldFormat.Entry(
            window: window(at: start, aggregates: over), aggregates: (0..<over).map { aggregate($0, at: start) })
        let first = HeldFormat.Entry(window: window(at: Self.heard, aggregates: 1), aggregates: [aggregate(1, at: Self.heard)])
        let last = Self.heard.adding(seconds: 120)
        let third = HeldFormat.Entry(window: window(at: last, aggregates: 1), aggregates: [aggregate(3, at: last)])
        _ = try log.data.prepare()
        try AtomicFile.write(HeldFormat.header(bootID: Self.boot) + [first, oversized, third].flatMap(HeldFormat.encode), to: path)
        let held = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await held.count == (2, 2))

        // Held whole by `hold`, the same window comes back within the bound, its strongest kept.
        var loud = (0..<over).map { aggregate($0, at: start, rssi: [-90]) }
        loud[over - 1] = aggregate(over - 1, at: start, rssi: [-30])
        try await held.hold(window: window(at: start, aggregates: over), aggregates: loud)
        let again = try HeldSightings(dataDirectory: log.data, bootID: Self.boot, logger: quietLogger)
        #expect(await again.count == (3, 2 + HeldFormat.maximumAggregates))
        let contents = try HeldFormat.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(contents.refusedEntries == 0)
        #expect(contents.entries[2].aggregates.contains { $0.rssi.maximum == -30 })
        #expect(contents.entries[2].window.aggregates == UInt32(HeldFormat.maximumAggregates))
    }

    /// The fuzz seed, written by a second encoder (Tests/Fuzz/Seeding/write_seeds.py), reads as
    /// that encoder meant.
    @Test func aFileOfAnotherEncoderReads() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/clock/held-sightings")
        let bytes = Array(try Data(contentsOf: seed).dropFirst())
        let contents = try HeldFormat.decode(bytes)
        #expect(contents.bootID == Self.boot)
        #expect(contents.entries.map(\.aggregates.count) == [2, 1])
        #expect(contents.entries.map(\.window.start.milliseconds) == [600_000, 660_000])
        #expect(contents.entries[0].aggregates[1].rssi == RSSISummary(maximum: -60, sum: -130, validReports: 2))
        #expect(contents.entries[0].window.previousScanEnd == nil)
        #expect(contents.damagedBytes == 0)
    }

    @Test func theFormatRoundTripsAndRefusesOtherFiles() throws {
        var summary = RSSISummary()
        summary.add(-61)
        let entry = HeldFormat.Entry(
            window: window(at: Self.heard, aggregates: 2, previous: Self.heard.adding(seconds: -30)),
            aggregates: [
                aggregate(1, at: Self.heard),
                ContactAggregate(
                    rpi: SyntheticContacts.rpi(seed: 1, number: 2), aem: AssociatedEncryptedMetadata((1, 2, 3, 4)), firstSeen: Self.heard,
                    lastSeen: Self.heard, reports: 1, rssi: RSSISummary(), previousScanEnd: nil),
            ])
        let bytes = HeldFormat.header(bootID: Self.boot) + HeldFormat.encode(entry)
        let contents = try HeldFormat.decode(bytes)
        #expect(contents.bootID == Self.boot)
        #expect(contents.entries == [entry])
        #expect(contents.damagedBytes == 0)
        #expect(throws: HeldFormat.Refusal.notHeldFile) { try HeldFormat.decode(Array("GAENSEG1".utf8) + bytes.dropFirst(8)) }
        var flipped = bytes
        flipped[HeldFormat.headerSize + 20] ^= 1
        #expect(try HeldFormat.decode(flipped).entries.isEmpty)
    }
}
