// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import Detection
import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Logging
import Storage
import Synchronization
import Testing

/// The matching rules, on a real log and real crypto.
@Suite(.ownThreads) struct MatcherTests {
    let directory: TemporaryDirectory
    let data: DataDirectory
    let crypto: ExposureKeyCrypto
    let tek = Bytes16(words: (0x0123_4567_89AB_CDEF, 0x0FED_CBA9_8765_4321))
    /// 2020-04-02T00:00Z.
    let day = ENIntervalNumber(rawValue: 2_642_976)

    init() throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.path + "/gaend")
        crypto = try ExposureKeyCrypto()
    }

    /// Logs the RPI of `interval` as heard at `heard` (seconds after the interval starts), with a TX power.
    func log(_ entries: [(interval: ENIntervalNumber, heard: Int64, tx: Int8, rssi: [Int8])]) async throws {
        let clock = ManualClock(day.start.adding(seconds: 86_400 * 3))
        let writer = try ContactLogWriter(
            dataDirectory: data, clock: clock, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let (rpik, aemk) = crypto.keys(for: tek)
        for entry in entries {
            let rpi = crypto.rpi(rpik: rpik, interval: entry.interval)
            let seen = entry.interval.start.adding(seconds: entry.heard)
            var rssi = RSSISummary()
            entry.rssi.forEach { rssi.add($0) }
            let aem = crypto.aem(for: .version1_1(txPower: entry.tx, calibrationConfidence: .medium), aemk: aemk, rpi: rpi)
            let aggregate = ContactAggregate(
                rpi: rpi, aem: aem, firstSeen: seen, lastSeen: seen.adding(seconds: 1), reports: UInt16(entry.rssi.count), rssi: rssi,
                previousScanEnd: seen.adding(seconds: -240))
            try await writer.append(
                window: ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1, previousScanEnd: nil,
                    monotonicMilliseconds: 4000),
                aggregates: [aggregate])
        }
    }

    func match(_ key: DiagnosisKey) async throws -> (KeyMatch?, MatchStatistics) {
        let matcher = Matcher(index: try MatchingIndex(reader: ContactLogReader(dataDirectory: data)))
        let (matches, statistics) = try await matcher.match([key], parallelism: 2)
        return (matches.first, statistics)
    }

    func key(period: UInt32 = 144, report: ReportType = .confirmedTest) -> DiagnosisKey {
        DiagnosisKey(key: try! TemporaryExposureKey(keyData: tek, rollingStartIntervalNumber: day, rollingPeriod: period), reportType: report)
    }

    @Test func theTwoHourToleranceIsInclusive() async throws {
        let j = day.advanced(by: 72)
        try await log([
            (j, 12 * 600, 0, [-60]),  // heard 12 intervals later: kept
            (j.advanced(by: 1), -12 * 600, 0, [-61]),  // heard 12 intervals earlier: kept
            (j.advanced(by: 2), 13 * 600, 0, [-62]),  // 13 later: dropped
            (j.advanced(by: 3), -13 * 600, 0, [-63]),  // 13 earlier: dropped
        ])
        let (found, statistics) = try await match(key())
        #expect(found?.sightings.map(\.aggregate.rssi.maximum) == [-61, -60])
        #expect(statistics.droppedOutsideTolerance == 2)
        #expect(found?.sightings.first?.metadata.calibrationConfidence == .medium)
    }

    /// The index keeps one filter a day (`DayFilters`): an RPI of the day's first or last twelve
    /// intervals is also asked of the neighbouring day's, where its sightings may be logged.
    @Test func theToleranceReachesAcrossMidnight() async throws {
        try await log([
            (day.advanced(by: 143), 12 * 600, 0, [-60]),  // 23:50's RPI heard at 01:50 the next day
            (day, -12 * 600, 0, [-61]),  // 00:00's RPI heard at 22:00 the day before
            (day.advanced(by: 5), -12 * 600, 0, [-62]),  // 00:50's RPI heard at 22:50 the day before
            (day.advanced(by: 131), 12 * 600, 0, [-63]),  // 21:50's, heard at 23:50 the same day
        ])
        let (found, statistics) = try await match(key())
        #expect(found?.sightings.map(\.aggregate.rssi.maximum) == [-61, -62, -63, -60])
        #expect(statistics.droppedOutsideTolerance == 0)
    }

    @Test func theReplayGuardDropsSightingsTwentyMinutesAfterTheFirst() async throws {
        let j = day.advanced(by: 40)
        try await log([(j, 0, 0, [-60]), (j, 19 * 60, 0, [-61]), (j, 21 * 60, 0, [-62])])
        let (found, statistics) = try await match(key())
        #expect(found?.sightings.count == 2)
        #expect(statistics.droppedByReplayGuard == 1)
    }

    @Test func aShortenedKeyMatchesOnlyItsOwnIntervals() async throws {
        try await log([(day.advanced(by: 9), 0, 0, [-60]), (day.advanced(by: 10), 0, 0, [-60])])
        let (short, _) = try await match(key(period: 10))
        #expect(short?.sightings.count == 1)
        let (whole, _) = try await match(key(period: 144))
        #expect(whole?.sightings.count == 2)
    }

    @Test func txPowerOutsideBoundsAndInvalidRSSIAreDropped() async throws {
        try await log([
            (day.advanced(by: 1), 0, 20, [-60]), (day.advanced(by: 2), 0, 21, [-60]), (day.advanced(by: 3), 0, -51, [-60]),
            (day.advanced(by: 4), 0, -50, [-60]), (day.advanced(by: 5), 0, 0, [127, 127]),
        ])
        let (found, statistics) = try await match(key())
        #expect(found?.sightings.map(\.metadata.txPower) == [20, -50])
        #expect(statistics.droppedTxPower == 2)
        #expect(statistics.droppedNoRSSI == 1)
    }

    @Test func recursiveKeysAreSkippedAndRevokedOnesMatched() async throws {
        try await log([(day.advanced(by: 1), 0, 0, [-60])])
        let (recursive, statistics) = try await match(key(report: .recursive))
        #expect(recursive == nil)
        #expect(statistics.keysSkipped == 1)
        let (revoked, _) = try await match(key(report: .revoked))
        #expect(revoked?.key.reportType == .revoked)
    }

    /// Matching on the cooperative pool with a worker per thread still lets a task that arrives
    /// meanwhile run between chunks (a D-Bus answer, a beacon rotation), not after the match.
    @Test func otherTasksRunBetweenChunks() async throws {
        try await log([(day.advanced(by: 1), 0, 0, [-60])])
        let matcher = Matcher(index: try MatchingIndex(reader: ContactLogReader(dataDirectory: data)))
        // Keys far from the logged days are cheap (skipped), so the 24 chunks go quickly.
        let far = DiagnosisKey(key: try TemporaryExposureKey(keyData: tek, rollingStartIntervalNumber: day.advanced(by: 144 * 5)))
        let keys = Array(repeating: far, count: 8192 * 24)
        final class Observed: Sendable {
            let done = Mutex(0)
            let seenByLatecomer = Mutex<Int?>(nil)
        }
        let observed = Observed()
        let workers = ProcessInfo.processInfo.activeProcessorCount
        // Detached: on the global pool, as in the daemon, not on this suite's own threads.
        let statistics = try await Task.detached {
            try await matcher.match(keys, parallelism: workers) { count in
                let total = observed.done.withLock {
                    $0 += count; return $0
                }
                if total == count {
                    Task.detached { observed.seenByLatecomer.withLock { $0 = observed.done.withLock { $0 } } }
                }
            }.statistics
        }.value
        #expect(statistics.keysSkipped == keys.count)
        let seen = try #require(observed.seenByLatecomer.withLock { $0 })
        #expect(seen < keys.count / 2, "the late task ran only after \(seen) of \(keys.count) keys")
    }

    @Test func keysFarFromTheLoggedDaysAreNotDerived() async throws {
        try await log([(day.advanced(by: 1), 0, 0, [-60])])
        let far = DiagnosisKey(key: try TemporaryExposureKey(keyData: tek, rollingStartIntervalNumber: day.advanced(by: 144 * 5)))
        let (found, statistics) = try await match(far)
        #expect(found == nil)
        #expect(statistics.keysSkipped == 1)
        #expect(statistics.rpisDerived == 0)
    }
}
