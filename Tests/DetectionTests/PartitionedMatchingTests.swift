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
import Testing

/// A log larger than one index's budget is matched an index of whole days at a time: what it finds
/// must be what one index of the whole log finds, rule for rule, also for an RPI heard on both
/// sides of midnight (±2 h, the replay guard from its first aggregate, newest first).
@Suite(.ownThreads) struct PartitionedMatchingTests {
    let directory: TemporaryDirectory
    let data: DataDirectory
    let signing: ECDSAPrivateKey
    /// The day before the vectors' day ends at this midnight.
    let midnight = UnixTime.vectorDay

    init() throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.path + "/gaend")
        signing = try ECDSAPrivateKey()
    }

    /// Sightings of `tek`'s RPI for `interval`, heard at each offset from midnight (seconds).
    func plant(_ tek: Bytes16, interval: ENIntervalNumber, heardAt offsets: [Int64], rssi: Int8 = -60) async throws {
        let crypto = try ExposureKeyCrypto()
        let writer = try ContactLogWriter(
            dataDirectory: data, clock: ManualClock(midnight.adding(seconds: 86_400)),
            logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let (rpik, aemk) = crypto.keys(for: tek)
        let rpi = crypto.rpi(rpik: rpik, interval: interval)
        for offset in offsets {
            let seen = midnight.adding(seconds: offset)
            var summary = RSSISummary()
            summary.add(rssi)
            try await writer.append(
                window: ScanWindowRecord(
                    start: seen, end: seen.adding(seconds: 4), reports: 1, exposureNotificationReports: 1, aggregates: 1,
                    previousScanEnd: seen.adding(seconds: -250), monotonicMilliseconds: 4000),
                aggregates: [
                    ContactAggregate(
                        rpi: rpi, aem: crypto.aem(for: .version1_1(txPower: 8, calibrationConfidence: .low), aemk: aemk, rpi: rpi),
                        firstSeen: seen, lastSeen: seen, reports: 1, rssi: summary, previousScanEnd: seen.adding(seconds: -250))
                ])
        }
        try await writer.sync()
    }

    func run(budget: Int, keys: [DiagnosisKey]) async throws -> DetectionRun {
        let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
        var pipeline = DetectionPipeline(reader: ContactLogReader(dataDirectory: data), policy: policy, parallelism: 2)
        pipeline.indexBudgetBytes = budget
        let zip = try KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1").archive(KeyExport(region: "US", keys: keys))
        return try await pipeline.run(files: [("1.zip", zip)], configuration: WearerFixture.configuration, now: midnight.adding(seconds: 2 * 86_400))
    }

    @Test func oneIndexADayFindsWhatOneIndexOfTheLogFinds() async throws {
        let lastInterval = ENIntervalNumber(containing: midnight.adding(seconds: -1))!
        let dayBefore = ENIntervalNumber(containing: midnight.adding(seconds: -86_400))!
        // Key A, the day before midnight: its last interval's RPI heard at 23:55 and again at
        // 00:05 and 00:30 (both within ±2 h; 00:30 is past the replay guard of the first).
        let a = Bytes16(words: (0xA, 0xA))
        try await plant(a, interval: lastInterval, heardAt: [-300, 300, 1800])
        // Key B, heard only after midnight, with its RPI of 23:50 (within 2 h).
        let b = Bytes16(words: (0xB, 0xB))
        try await plant(b, interval: ENIntervalNumber(containing: midnight.adding(seconds: -600))!, heardAt: [3600])
        // Key C, heard two days back only.
        let c = Bytes16(words: (0xC, 0xC))
        try await plant(c, interval: dayBefore.advanced(by: -144 + 60), heardAt: [-2 * 86_400 + 60 * 600 + 30])
        let keys =
            [a, b, c].map { tek in
                DiagnosisKey(
                    key: try! TemporaryExposureKey(keyData: tek, rollingStartIntervalNumber: tek == c ? dayBefore.advanced(by: -144) : dayBefore),
                    transmissionRiskLevel: 4, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: 0)
            }
            + (0..<500).map { number in
                DiagnosisKey(
                    key: try! TemporaryExposureKey(keyData: Bytes16(words: (UInt64(number), 0xFF)), rollingStartIntervalNumber: dayBefore),
                    reportType: .confirmedTest)
            }
        #expect(try ContactLogReader(dataDirectory: data).days().count == 3)

        let whole = try await run(budget: .max, keys: keys)
        let daily = try await run(budget: 1, keys: keys)
        #expect(whole.result.statistics.matchedKeys == 3)
        #expect(whole.result.statistics.droppedByReplayGuard == 1)
        for field in [\MatchStatistics.keys, \.keysSkipped, \.matchedKeys, \.newResults, \.droppedByReplayGuard, \.droppedOutsideTolerance] {
            #expect(daily.result.statistics[keyPath: field] == whole.result.statistics[keyPath: field], "\(field)")
        }
        #expect(Set(daily.results.results.map(\.match)) == Set(whole.results.results.map(\.match)))
        #expect(Set(daily.result.windows) == Set(whole.result.windows))
        #expect(daily.result.exposureDays == whole.result.exposureDays)
        // Key A's sightings: 23:55 and 00:05, newest first into the rules, oldest first out.
        let sightingsOfA = whole.results.results.first { $0.match.key.key.keyData == a }?.match.sightings.map(\.aggregate.firstSeen)
        #expect(sightingsOfA == [midnight.adding(seconds: -300), midnight.adding(seconds: 300)])
    }

    @Test func theBudgetSplitsALogIntoWholeDays() async throws {
        let dayBefore = ENIntervalNumber(containing: midnight.adding(seconds: -86_400))!
        for back in 0..<4 {
            try await plant(Bytes16(words: (UInt64(back), 1)), interval: dayBefore, heardAt: [Int64(-back) * 86_400 - 3600])
        }
        var partitions = try MatchingPartitions(reader: ContactLogReader(dataDirectory: data), budgetBytes: 1)
        var sizes = [Int]()
        while let index = partitions.nextIndex() { sizes.append(index.days.count) }
        #expect(sizes == [1, 1, 1, 1])
        var whole = try MatchingPartitions(reader: ContactLogReader(dataDirectory: data))
        #expect(whole.nextIndex()?.days.count == 4)
        #expect(whole.isDone)
        var empty = try MatchingPartitions(reader: ContactLogReader(dataDirectory: DataDirectory(path: directory.path + "/none")))
        #expect(empty.nextIndex()?.aggregateCount == 0)
        #expect(empty.nextIndex() == nil)
    }
}
