// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Storage
import Testing

@Suite(.ownThreads) struct RetentionTests {
    @Test func segmentsOlderThanFourteenDaysGoAtStartUpAndOnceADay() async throws {
        let first = LogFixture.day
        let log = try LogFixture(now: first.start.adding(seconds: 600))
        // Write one window a day for 16 days, moving the clock along.
        do {
            let writer = try log.writer()
            for offset in 0..<16 {
                let time = first.advanced(by: Int64(offset)).start.adding(seconds: 600)
                log.clock.set(time)
                try await writer.append(window: window(at: time, aggregates: 1), aggregates: [aggregate(offset, at: time)])
            }
            // The day changed under the writer 15 times: each time it pruned. On day 16 (offset 15)
            // the days of offsets 0 and 1 are 15 and 14 days back: gone.
            #expect(try log.reader.days().first == first.advanced(by: 2))
            #expect(try log.reader.days().count == 14)
        }
        // A restart a day later prunes at start-up, before any append.
        log.clock.advance(seconds: 86_400)
        let writer = try log.writer()
        #expect(await writer.recovery.expired == [first.advanced(by: 2)])
        #expect(try log.reader.days().count == 13)
    }

    @Test func theWallClockGoingBackIsNoProblem() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let today = LogFixture.noon
        try await writer.append(window: window(at: today, aggregates: 1), aggregates: [aggregate(1, at: today)])
        // The clock steps back two days: records go to the older segment, nothing is lost.
        let earlier = today.adding(seconds: -2 * 86_400)
        log.clock.set(earlier)
        try await writer.append(window: window(at: earlier, aggregates: 1), aggregates: [aggregate(2, at: earlier)])
        log.clock.set(today.adding(seconds: 60))
        try await writer.append(window: window(at: today.adding(seconds: 60), aggregates: 1), aggregates: [aggregate(3, at: today.adding(seconds: 60))])
        #expect(try log.reader.days() == [LogFixture.day.advanced(by: -2), LogFixture.day])
        #expect(try log.aggregates().count == 3)
    }

    @Test func recordsThatCannotBeFiledAreRefusedAndCounted() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let now = LogFixture.noon
        var backwards = aggregate(1, at: now)
        backwards.lastSeen = now.adding(seconds: -1)
        var tooLong = aggregate(2, at: now)
        tooLong.lastSeen = now.adding(seconds: 3601)
        let beforeEpoch = aggregate(3, at: UnixTime(seconds: -100))
        let expired = aggregate(4, at: now.adding(seconds: -14 * 86_400))
        let good = aggregate(5, at: now)
        let written = try await writer.append(window: window(at: now, aggregates: 5), aggregates: [backwards, tooLong, beforeEpoch, expired, good])
        #expect(written == 1)
        #expect(await writer.refusedRecords == 4)
        #expect(try log.aggregates() == [good])
        #expect(try log.reader.days() == [LogFixture.day])
    }

    @Test func anIntactRecordWhoseTimeIsOutsideItsDayIsRefusedOnReading() async throws {
        // The writer cannot produce one, so build it by hand: an aggregate record with a valid
        // checksum whose first-seen offset is 25 hours into the day.
        let log = try LogFixture()
        let good = aggregate(1, at: LogFixture.noon)
        do {
            let writer = try log.writer()
            try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [good])
        }
        var record = [UInt8](repeating: 0, count: 48)
        record[0] = 1  // aggregate
        withUnsafeBytes(of: UInt32(90_000_000).littleEndian) { record.replaceSubrange(24..<28, with: $0) }
        withUnsafeBytes(of: UInt32(90_001_000).littleEndian) { record.replaceSubrange(28..<32, with: $0) }
        withUnsafeBytes(of: CRC32C.checksum(record[0..<44]).littleEndian) { record.replaceSubrange(44..<48, with: $0) }
        let path = log.segmentPath(LogFixture.day)
        let bytes = try #require(try AtomicFile.read(path, limit: 1 << 20))
        try AtomicFile.write(bytes + record + bytes[48..<96], to: path)

        let report = try #require(try log.reader.verify().segments.first)
        #expect(report.outOfDayRecords == 1)
        #expect(report.problems.first?.offset == Int64(bytes.count))
        #expect(report.tornTailBytes == 0)
        #expect(try log.aggregates() == [good, good])
        let reopened = try log.writer()
        #expect(await reopened.recovery.outOfDayRecords[LogFixture.day] == 1)
    }
}

@Suite(.ownThreads) struct UntrustedRetentionTests {
    @Test func nothingIsDeletedByAClockThatCannotBeTrusted() async throws {
        let log = try LogFixture()
        do {
            let writer = try log.writer()
            try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [aggregate(1, at: LogFixture.noon)])
        }
        // 400 days ahead, not synchronized: opening and writing delete nothing.
        log.clock.advance(seconds: 400 * 86_400)
        log.clock.distrust("the clock is not synchronized")
        let writer = try log.writer()
        #expect(await writer.recovery.expired.isEmpty)
        #expect(try await writer.pruneExpired().isEmpty)
        #expect(try log.reader.days() == [LogFixture.day])
        // Trusted again at that time (it was real time passing): the next day's append prunes.
        log.clock.distrust(nil)
        log.clock.advance(seconds: 86_400)
        let later = log.clock.now()
        try await writer.append(window: window(at: later, aggregates: 1), aggregates: [aggregate(2, at: later)])
        #expect(try log.reader.days() == [UTCDay(containing: later)])
    }
}
