// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import InMemoryLogging
import Logging
import Storage
import Testing

@Suite(.ownThreads) struct RecoveryTests {
    /// Writes `windows` windows of two aggregates each and returns the segment's bytes.
    func writeLog(_ log: LogFixture, windows: Int) async throws -> [UInt8] {
        let writer = try log.writer()
        for index in 0..<windows {
            let time = LogFixture.noon.adding(seconds: Int64(index) * 240)
            try await writer.append(window: window(at: time, aggregates: 2), aggregates: [aggregate(2 * index, at: time), aggregate(2 * index + 1, at: time)])
        }
        return try #require(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20))
    }

    @Test func aTornTailIsCutAtEveryByteOffsetOfTheLastRecord() async throws {
        let log = try LogFixture()
        let bytes = try await writeLog(log, windows: 3)  // 9 records
        let intact = bytes.count - 48
        let expected = try log.records().dropLast()
        for cut in intact..<bytes.count {
            try AtomicFile.write(Array(bytes[0..<cut]), to: log.segmentPath(LogFixture.day))
            // Readers report the torn tail and leave it.
            let report = try #require(try log.reader.verify().segments.first)
            #expect(report.tornTailBytes == Int64(cut - intact))
            #expect(Array(try log.records()) == Array(expected))
            #expect(try AtomicFile.size(of: log.segmentPath(LogFixture.day)) == Int64(cut))

            // The writer cuts it, says how much, and appends on the record boundary.
            var handler = InMemoryLogHandler()
            handler.logLevel = .debug
            let logs = handler
            let writer = try log.writer(logger: Logger(label: "test", factory: { _ in logs }))
            let recovery = await writer.recovery
            #expect(recovery.truncated[LogFixture.day] == (cut == intact ? nil : Int64(cut - intact)))
            if cut > intact {
                let warning = try #require(logs.entries.first { $0.level == .warning })
                #expect(warning.metadata["bytes.cut"] == "\(cut - intact)")
                #expect(warning.metadata["bytes.before"] == "\(cut)")
            }
            #expect(try AtomicFile.size(of: log.segmentPath(LogFixture.day)) == Int64(intact))
            let extra = aggregate(99, at: LogFixture.noon.adding(seconds: 3600))
            try await writer.append(window: window(at: extra.firstSeen, aggregates: 1), aggregates: [extra])
            #expect(try log.reader.verify().isIntact)
            #expect(try log.aggregates().last == extra)
        }
    }

    @Test func zerosAfterACrashAreATornTail() async throws {
        let log = try LogFixture()
        let bytes = try await writeLog(log, windows: 2)
        try AtomicFile.write(bytes + [UInt8](repeating: 0, count: 100), to: log.segmentPath(LogFixture.day))
        let writer = try log.writer()
        #expect(await writer.recovery.truncated[LogFixture.day] == 100)
        #expect(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20) == bytes)
    }

    @Test func aCorruptRecordInTheMiddleIsSkippedCountedAndKept() async throws {
        let log = try LogFixture()
        var bytes = try await writeLog(log, windows: 3)
        let all = try log.records()
        let offset = 48 + 48 * 4  // the fifth record
        bytes[offset + 10] ^= 0x40
        try AtomicFile.write(bytes, to: log.segmentPath(LogFixture.day))

        var remaining = all
        remaining.remove(at: 4)
        #expect(try log.records() == remaining)
        let verification = try log.reader.verify()
        #expect(!verification.isIntact)
        let report = try #require(verification.segments.first)
        #expect(report.corruptRecords == 1)
        #expect(report.problems.first?.offset == Int64(offset))
        #expect(report.tornTailBytes == 0)

        // The writer reports it, cuts nothing, and goes on appending after it.
        let writer = try log.writer()
        #expect(await writer.recovery.corruptRecords[LogFixture.day] == 1)
        #expect(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20) == bytes)
        let extra = aggregate(99, at: LogFixture.noon.adding(seconds: 3600))
        try await writer.append(window: window(at: extra.firstSeen, aggregates: 1), aggregates: [extra])
        #expect(try log.aggregates().last == extra)
    }

    @Test func anUnreadableHeaderIsMovedAsideNotOverwritten() async throws {
        let log = try LogFixture()
        var bytes = try await writeLog(log, windows: 1)
        bytes[2] = UInt8(ascii: "X")
        try AtomicFile.write(bytes, to: log.segmentPath(LogFixture.day))
        #expect(try log.reader.verify().segments.first?.unreadable?.contains("magic") == true)

        let writer = try log.writer()
        #expect(await writer.recovery.setAside[LogFixture.day] != nil)
        let aside = try FileManager.default.contentsOfDirectory(atPath: log.data.path + "/contacts").filter { $0.contains(".unreadable-") }
        #expect(aside.count == 1)
        #expect(try AtomicFile.read(log.data.path + "/contacts/" + aside[0], limit: 1 << 20) == bytes)
        // A fresh segment takes the day's new records.
        let extra = aggregate(5, at: LogFixture.noon)
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [extra])
        #expect(try log.aggregates() == [extra])
        #expect(try log.reader.verify().otherFiles == aside)
    }

    /// Issue 40, item 5: one flipped reserved byte of the header hid the whole day from matching.
    /// The records, each with its own checksum and filed by the name's day, are read; the file is
    /// kept and appended to; the damage is reported. A flipped version or day is still unreadable.
    @Test func aDamagedReservedHeaderByteHidesNoRecord() async throws {
        let log = try LogFixture()
        var bytes = try await writeLog(log, windows: 3)
        let written = try log.aggregates()
        bytes[20] ^= 0x01
        try AtomicFile.write(bytes, to: log.segmentPath(LogFixture.day))
        let verified = try log.reader.verify()
        #expect(verified.segments.first?.unreadable == nil)
        #expect(verified.segments.first?.headerDamage?.contains("version 1") == true)
        #expect(!verified.isIntact)
        #expect(try log.aggregates() == written)
        #expect(try MatchingIndex(reader: log.reader).aggregateCount == 6)

        let writer = try log.writer()
        #expect(await writer.recovery.setAside.isEmpty)
        let extra = aggregate(50, at: LogFixture.noon.adding(seconds: 3600))
        try await writer.append(window: window(at: LogFixture.noon.adding(seconds: 3600), aggregates: 1), aggregates: [extra])
        #expect(try log.aggregates() == written + [extra])
        #expect(try FileManager.default.contentsOfDirectory(atPath: log.data.path + "/contacts").filter { $0.contains(".unreadable-") }.isEmpty)

        // The version itself flipped: which records these are cannot be known.
        var other = bytes
        other[8] ^= 0x02
        try AtomicFile.write(other, to: log.segmentPath(LogFixture.day))
        #expect(try log.reader.verify().segments.first?.unreadable != nil)
    }

    @Test func aTornHeaderIsEmptiedAndRewritten() async throws {
        let log = try LogFixture()
        try log.data.prepare()
        try DataDirectory(path: log.data.path + "/contacts").prepare()
        try AtomicFile.write(Array("GAENCL".utf8), to: log.segmentPath(LogFixture.day))
        let writer = try log.writer()
        #expect(await writer.recovery.truncated[LogFixture.day] == 6)
        let extra = aggregate(5, at: LogFixture.noon)
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [extra])
        #expect(try log.aggregates() == [extra])
        #expect(try log.reader.verify().isIntact)
    }
}
