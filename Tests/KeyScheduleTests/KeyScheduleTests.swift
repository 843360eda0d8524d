// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import InMemoryLogging
import KeySchedule
import Logging
import Storage
import Testing

@Suite(.ownThreads) struct KeyScheduleTests {
    let directory: TemporaryDirectory
    let data: DataDirectory
    let clock = ManualClock(.vectorDay.adding(seconds: 13 * 3600 + 5 * 60))  // 13:05 UTC
    let day = ENIntervalNumber(rawValue: 2_642_976)

    let logs: InMemoryLogHandler

    init() throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.path + "/gaend")
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        logs = handler
    }

    func schedule(random: any RandomBytesSource = CountingRandom()) throws -> KeySchedule {
        try KeySchedule(
            dataDirectory: data, clock: clock, random: random, logger: Logger(label: "test", factory: { _ in logs }))
    }

    /// Every log line as text, message and metadata.
    func logText() -> String {
        logs.entries.map { "\($0.level) \($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    @Test func noKeyIsMadeReleasedOrPrunedOnAClockThatCannotBeTrusted() async throws {
        let keys = try schedule()
        let first = try await keys.currentKey()
        clock.distrust("the clock is not synchronized")
        await #expect(throws: KeyHistoryError.self) { try await keys.currentKey() }
        await #expect(throws: KeyHistoryError.self) { try await keys.releaseDiagnosisKeys() }
        await #expect(throws: KeyHistoryError.self) { try await keys.testDiagnosisKeys() }
        // 400 days on, untrusted: the key stays.
        clock.advance(seconds: 400 * 86_400)
        #expect(try await keys.pruneExpiredKeys() == 0)
        #expect(await keys.history().map(\.key) == [first])
        do {
            _ = try await keys.currentKey()
        } catch {
            #expect("\(error)" == "no key is made or released while the clock is not trusted: the clock is not synchronized")
        }
        #expect(try KeyScheduleTests.storedKeys(data) == 1)
    }

    static func storedKeys(_ data: DataDirectory) throws -> Int {
        try KeyHistoryFile.read(data.path(of: KeyHistoryFile.name))?.keys.count ?? 0
    }

    @Test func aKeyMadeAtMiddayStartsAtUTCMidnightAndCoversTheDay() async throws {
        let keys = try schedule()
        let key = try await keys.currentKey()
        #expect(key.rollingStartIntervalNumber == day)
        #expect(key.rollingPeriod == 144)
        // The same key for the rest of the day.
        clock.set(.vectorDay.adding(seconds: 86_399))
        #expect(try await keys.currentKey() == key)
        #expect(await keys.history().count == 1)
    }

    @Test func theKeyRollsAtUTCMidnight() async throws {
        let keys = try schedule()
        clock.set(.vectorDay.adding(seconds: 86_399))
        let before = try await keys.currentKey()
        clock.advance(seconds: 1)
        let after = try await keys.currentKey()
        #expect(after != before)
        #expect(after.rollingStartIntervalNumber == day.advanced(by: 144))
        #expect(after.keyData != before.keyData)
        #expect(await keys.history().map(\.key) == [before, after])
    }

    @Test func retentionKeepsFourteenDaysAndDeletesTheFifteenth() async throws {
        let keys = try schedule()
        var made = [TemporaryExposureKey]()
        for dayOffset in 0..<15 {
            clock.set(.vectorDay.adding(seconds: Int64(dayOffset) * 86_400 + 600))
            made.append(try await keys.currentKey())
        }
        // On day 15 (offset 14), the key of day 1 (offset 0) is the 15th day back: gone.
        let held = await keys.history().map(\.key)
        #expect(held.count == 14)
        #expect(held.first == made[1])
        #expect(!held.contains(made[0]))
        // And the deletion is on disk, not only in memory.
        #expect(try KeyHistoryFile.read(keys.path)?.keys.map(\.key) == held)
    }

    @Test func pruningAtStartUpWithoutMakingAKey() async throws {
        let keys = try schedule()
        _ = try await keys.currentKey()
        clock.advance(seconds: 20 * 86_400)
        let reopened = try schedule()
        #expect(try await reopened.pruneExpiredKeys() == 1)
        #expect(await reopened.history().isEmpty)
    }

    @Test func releaseShortensTheCurrentKeyAndIssuesANewOneWithTheSameStart() async throws {
        let keys = try schedule()
        clock.set(.vectorDay.adding(seconds: -86_400 + 60))
        let yesterday = try await keys.currentKey()
        clock.set(.vectorDay.adding(seconds: 13 * 3600 + 5 * 60))  // interval 78 of the day
        let today = try await keys.currentKey()

        let released = try await keys.releaseDiagnosisKeys()
        #expect(released.count == 2)
        #expect(released[0] == yesterday)
        #expect(released[1].keyData == today.keyData)
        #expect(released[1].rollingStartIntervalNumber == day)
        #expect(released[1].rollingPeriod == 78)

        // From now on a new key with the same start is broadcast; the released one never again.
        let replacement = try await keys.currentKey()
        #expect(replacement.keyData != today.keyData)
        #expect(replacement.rollingStartIntervalNumber == day)
        #expect(replacement.rollingPeriod == 144)
        let history = await keys.history()
        #expect(history.count == 3)
        #expect(history[1].shortenedByRelease)
        #expect(!history[2].shortenedByRelease)

        // Issue 53: a later release the same day (a retry after a failed share) releases the same
        // keys: the replacement is not cut, and stays on the air; three more make no more keys.
        clock.advance(seconds: 30 * 60)
        for _ in 0..<3 {
            let again = try await keys.releaseDiagnosisKeys()
            #expect(again == released)
        }
        #expect(try await keys.currentKey() == replacement)
        #expect(await keys.history().count == 3)
        // The next day, the replacement is released whole beside the day's cut key, and today's
        // key is cut: two keys of yesterday's start, never more.
        clock.advance(seconds: 12 * 3600)  // 01:35, interval 9 of the next day
        _ = try await keys.currentKey()
        let nextDay = try await keys.releaseDiagnosisKeys()
        #expect(nextDay.map(\.rollingPeriod) == [144, 78, 144, 9])
        #expect(nextDay[2] == replacement)
        #expect(Dictionary(grouping: nextDay, by: \.rollingStartIntervalNumber).values.allSatisfy { $0.count <= 2 })

        // Through all of it, no key reached the log, at any level.
        let text = logText()
        #expect(!text.isEmpty)
        for key in await keys.history() {
            #expect(!text.contains(key.key.keyData.hex))
        }
    }

    @Test func releaseInTheFirstIntervalOfTheDayKeepsTheCurrentKey() async throws {
        let keys = try schedule()
        clock.set(.vectorDay.adding(seconds: 5 * 60))
        let current = try await keys.currentKey()
        #expect(try await keys.releaseDiagnosisKeys().isEmpty)
        #expect(try await keys.currentKey() == current)
    }

    @Test func testKeysIncludeTheWholeCurrentKeyAndChangeNothing() async throws {
        let keys = try schedule()
        let current = try await keys.currentKey()
        let test = try await keys.testDiagnosisKeys()
        #expect(test == [current])
        #expect(try await keys.currentKey() == current)
    }

    @Test func aRestartReadsTheSameKeysFromDisk() async throws {
        let first = try schedule()
        let key = try await first.currentKey()
        _ = try await first.releaseDiagnosisKeys()
        let history = await first.history()

        let second = try schedule()
        #expect(await second.history() == history)
        #expect(try await second.currentKey() == history.last?.key)
        #expect(history.first?.key.keyData == key.keyData)
    }

    @Test func filesArePrivate() async throws {
        let keys = try schedule()
        _ = try await keys.currentKey()
        #expect(try AtomicFile.mode(of: data.path) == 0o700)
        #expect(try AtomicFile.mode(of: keys.path) == 0o600)
    }

    @Test func resetDeletesEveryKey() async throws {
        let keys = try schedule()
        let before = try await keys.currentKey()
        try await keys.reset()
        #expect(await keys.history().isEmpty)
        #expect(try AtomicFile.read(keys.path, limit: 1024) == nil)
        #expect(try await keys.currentKey() != before)
    }

    @Test func aDamagedHeaderStopsTheScheduleAndTouchesNothing() async throws {
        let keys = try schedule()
        _ = try await keys.currentKey()
        let neighbour = data.path(of: "contacts-placeholder")
        try AtomicFile.write([1, 2, 3], to: neighbour)
        var bytes = try #require(try AtomicFile.read(keys.path, limit: 1 << 20))
        bytes[3] ^= 0xFF  // inside the magic
        try AtomicFile.write(bytes, to: keys.path)

        let error = try #require(throws: KeyHistoryError.self) { try schedule() }
        #expect("\(error)".contains(keys.path))
        #expect("\(error)".contains("magic"))
        // The damaged file and its neighbours are exactly as they were.
        #expect(try AtomicFile.read(keys.path, limit: 1 << 20) == bytes)
        #expect(try AtomicFile.read(neighbour, limit: 10) == [1, 2, 3])
    }

    @Test func aDamagedRecordCostsOnlyThatKeyAndTheOriginalIsKeptAside() async throws {
        let keys = try schedule()
        var made = [TemporaryExposureKey]()
        for dayOffset in 0..<3 {
            clock.set(.vectorDay.adding(seconds: Int64(dayOffset) * 86_400 + 600))
            made.append(try await keys.currentKey())
        }
        var bytes = try #require(try AtomicFile.read(keys.path, limit: 1 << 20))
        bytes[16 + 32 + 5] ^= 0x01  // one bit of the second key's data
        try AtomicFile.write(bytes, to: keys.path)

        let contents = try #require(try KeyHistoryFile.read(keys.path))
        #expect(contents.damagedRecords == [1])
        let reopened = try schedule()
        let report = try #require(logs.entries.first { $0.level == .error })
        #expect(report.metadata["keys.damaged"] == "1")
        #expect(report.metadata["keys.kept"] == "2")
        #expect(await reopened.history().map(\.key) == [made[0], made[2]])
        // The first rewrite copies the damaged original aside instead of destroying it.
        clock.advance(seconds: 86_400)
        _ = try await reopened.currentKey()
        let aside = try FileManager.default.contentsOfDirectory(atPath: data.path)
            .filter { $0.hasPrefix("tek-history.damaged-") }
        #expect(aside.count == 1)
        #expect(try AtomicFile.read(data.path(of: aside[0]), limit: 1 << 20) == bytes)
    }

    @Test func aNewerFormatIsRefusedByName() async throws {
        let keys = try schedule()
        _ = try await keys.currentKey()
        var bytes = try #require(try AtomicFile.read(keys.path, limit: 1 << 20))
        bytes[8] = 2
        // Re-seal the header so that only the version is wrong.
        let crc = CRC32C.checksum(bytes[0..<12])
        bytes.replaceSubrange(12..<16, with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        try AtomicFile.write(bytes, to: keys.path)
        let error = try #require(throws: KeyHistoryError.self) { try schedule() }
        #expect("\(error)".contains("format version 2"))
    }

    @Test func failuresLeaveTheHistoryAsItWas() async throws {
        let keys = try schedule(random: FailingRandom())
        await #expect(throws: KeyHistoryError.self) { try await keys.currentKey() }
        #expect(await keys.history().isEmpty)
        clock.set(UnixTime(seconds: -10))
        let working = try schedule()
        let error = await #expect(throws: KeyHistoryError.self) { try await working.currentKey() }
        #expect("\(String(describing: error))".contains("wall clock"))
    }

    /// A history an earlier version wrote, with five keys of one start (cut at every release):
    /// 3 of them are released, those covering the most intervals, so the key server takes them.
    @Test func aHistoryWithMoreThanThreeKeysOfOneStartReleasesThree() async throws {
        let start = day
        var history = [HistoryKey]()
        for (index, period) in [UInt32(10), 20, 30, 40].enumerated() {
            let key = try TemporaryExposureKey(keyData: Bytes16(words: (UInt64(index + 1), 0)), rollingStartIntervalNumber: start, rollingPeriod: period)
            history.append(HistoryKey(key: key, created: .vectorDay, shortenedByRelease: true))
        }
        _ = try schedule()  // makes the data directory
        try AtomicFile.write(KeyHistoryFile.encode(history), to: data.path(of: KeyHistoryFile.name))
        let keys = try schedule()
        let released = try await keys.releaseDiagnosisKeys()
        #expect(released.map(\.rollingPeriod) == [20, 30, 40])
    }
}
