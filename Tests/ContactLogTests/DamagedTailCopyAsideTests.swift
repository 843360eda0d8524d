// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import InMemoryLogging
import Logging
import Storage
import Testing

/// Recovery cuts a torn record's worth (less than two records) silently; more damage at the end of a
/// segment is copied aside before the cut, the copies are bounded, and damage that cannot be copied
/// is kept rather than cut.
@Suite(.ownThreads) struct DamagedTailCopyAsideTests {
    /// Three windows of two aggregates each (nine records), and the segment's bytes.
    func writeGoodRecords(_ log: LogFixture) async throws -> [UInt8] {
        let writer = try log.writer()
        for index in 0..<3 {
            let time = LogFixture.noon.adding(seconds: Int64(index) * 240)
            try await writer.append(window: window(at: time, aggregates: 2), aggregates: [aggregate(2 * index, at: time), aggregate(2 * index + 1, at: time)])
        }
        return try #require(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20))
    }

    /// `count` 48-byte records that are no records: an unknown type byte, then bytes that vary.
    static func badRecords(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count * 48)
        for index in bytes.indices { bytes[index] = index % 48 == 0 ? 0xEE : UInt8(truncatingIfNeeded: generator.next()) }
        return bytes
    }

    /// Appends `bytes` to the file at `path`, `times` times, without holding them all in memory.
    static func append(_ bytes: [UInt8], times: Int, to path: String) throws {
        let file = try AppendOnlyFile(path: path, mode: .append)
        for _ in 0..<times {
            try bytes.withUnsafeBytes { raw in Result { () throws(FileSystemError) in try file.append(raw) } }.get()
        }
    }

    func contactsEntries(_ log: LogFixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: log.data.path + "/contacts").sorted()
    }

    func damagedCopies(_ log: LogFixture) throws -> [String] {
        try contactsEntries(log).filter { $0.hasPrefix("\(LogFixture.day).log.damaged-") }
    }

    /// The case: a valid header and 1,000,000 bad records (48 MB) after nine good ones.
    @Test func aMillionBadRecordsAreCopiedAsideByteForByteBeforeTheCut() async throws {
        let log = try LogFixture()
        let good = try await writeGoodRecords(log)
        let expected = try log.records()
        let chunk = Self.badRecords(10_000)
        try Self.append(chunk, times: 100, to: log.segmentPath(LogFixture.day))
        let damagedSize = Int64(good.count + 1_000_000 * 48)
        #expect(try AtomicFile.size(of: log.segmentPath(LogFixture.day)) == damagedSize)

        let handler = InMemoryLogHandler()
        let writer = try log.writer(logger: Logger(label: "test", factory: { _ in handler }))
        let recovery = await writer.recovery
        let copy = try #require(recovery.copiedAside[LogFixture.day])
        #expect(copy == log.data.path + "/contacts/" + (try #require(try damagedCopies(log).first)))
        #expect(try damagedCopies(log).count == 1)
        #expect(copy.hasPrefix(log.segmentPath(LogFixture.day) + ".damaged-\(log.clock.now().seconds)"))
        #expect(try AtomicFile.mode(of: copy) == 0o600)
        #expect(recovery.truncated[LogFixture.day] == Int64(48_000_000))
        #expect(recovery.damageKept.isEmpty)

        // The copy is the damaged segment, byte for byte.
        #expect(try AtomicFile.size(of: copy) == damagedSize)
        let copied = try AppendOnlyFile(path: copy, mode: .readOnly)
        var buffer = [UInt8](repeating: 0, count: chunk.count)
        let head = try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(FileSystemError) in try copied.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<good.count]), at: 0) }
        }.get()
        #expect(head == good.count && Array(buffer[0..<good.count]) == good)
        for index in 0..<100 {
            let count = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(FileSystemError) in try copied.read(into: raw, at: Int64(good.count + index * chunk.count)) }
            }.get()
            #expect(count == chunk.count && buffer == chunk, "chunk \(index)")
        }

        // The log line says what was cut and where the copy went.
        let line = try #require(handler.entries.first { $0.metadata["copiedTo"] != nil })
        #expect(line.level == .error)
        #expect(line.metadata["copiedTo"] == "\(copy)")
        #expect(line.metadata["bytes.cut"] == "48000000")
        #expect(line.metadata["bytes.before"] == "\(damagedSize)")
        #expect(line.metadata["bytes.after"] == "\(good.count)")

        // The good records survive, and appending goes on after them.
        #expect(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20) == good)
        #expect(try log.records() == expected)
        let extra = aggregate(99, at: LogFixture.noon.adding(seconds: 3600))
        try await writer.append(window: window(at: extra.firstSeen, aggregates: 1), aggregates: [extra])
        #expect(try log.aggregates().last == extra)
        #expect(try log.reader.verify().segments.allSatisfy(\.isIntact))
    }

    @Test func aTornRecordsWorthIsCutWithoutACopy() async throws {
        let log = try LogFixture()
        let good = try await writeGoodRecords(log)
        // A partial record, a whole record that fails its checksum, and one of each: under 96 bytes.
        for tail in [1, 47, 48, 49, 95] {
            try AtomicFile.write(good + Self.badRecords(2, seed: UInt64(tail)).prefix(tail), to: log.segmentPath(LogFixture.day))
            let writer = try log.writer()
            #expect(await writer.recovery.truncated[LogFixture.day] == Int64(tail))
            #expect(await writer.recovery.copiedAside.isEmpty)
            #expect(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20) == good)
        }
        #expect(try damagedCopies(log).isEmpty)
        // Two whole bad records are more than a crash of this writer leaves: copied.
        try AtomicFile.write(good + Self.badRecords(2), to: log.segmentPath(LogFixture.day))
        let writer = try log.writer()
        #expect(await writer.recovery.truncated[LogFixture.day] == 96)
        #expect(await writer.recovery.copiedAside[LogFixture.day] != nil)
        #expect(try damagedCopies(log).count == 1)
    }

    @Test func aBadRecordFollowedByGoodOnesIsKeptNotCopied() async throws {
        let log = try LogFixture()
        let good = try await writeGoodRecords(log)
        // Five hundred bad records, then the good ones again: damage in the middle, nothing to cut.
        let bytes = good + Self.badRecords(500) + good[48...]
        try AtomicFile.write(bytes, to: log.segmentPath(LogFixture.day))
        let writer = try log.writer()
        let recovery = await writer.recovery
        #expect(recovery.corruptRecords[LogFixture.day] == 500)
        #expect(recovery.truncated.isEmpty && recovery.copiedAside.isEmpty)
        #expect(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20) == bytes)
        // The report counts every damaged record but lists a bounded number.
        let report = try #require(try log.reader.verify().segments.first)
        #expect(report.corruptRecords == 500)
        #expect(report.problems.count == SegmentReport.listedProblemsLimit)
        #expect(report.problems.first?.offset == Int64(good.count))
    }

    @Test func repeatedDamageKeepsABoundedNumberOfCopiesAndNoneAfterTheRetention() async throws {
        let log = try LogFixture()
        let good = try await writeGoodRecords(log)
        // An unreadable segment of an older release counts towards the bound, and goes first.
        let old = "\(LogFixture.day).log.unreadable-18354-4896"
        try AtomicFile.write(good, to: log.data.path + "/contacts/" + old)
        var made = [String]()
        var deleted = [String]()
        for round in 0..<6 {
            // Twice in the same second, then a second later: names never collide.
            if round % 2 == 0 { log.clock.advance(seconds: 1) }
            try Self.append(Self.badRecords(3, seed: UInt64(round)), times: 1, to: log.segmentPath(LogFixture.day))
            let writer = try log.writer()
            let recovery = await writer.recovery
            made.append(try #require(recovery.copiedAside[LogFixture.day]))
            deleted += recovery.asideDeleted
            #expect(try contactsEntries(log).count { $0.hasPrefix("\(LogFixture.day).log.") } <= 3)
        }
        #expect(Set(made).count == 6)
        // The newest three are kept.
        let names = made.map { String($0.split(separator: "/").last!) }
        #expect(try damagedCopies(log) == names.suffix(3).sorted())
        #expect(deleted == [old] + names.prefix(3))
        #expect(try log.records().count == 9)

        // Copies go with their day at the retention.
        log.clock.advance(seconds: 14 * 86_400)
        let writer = try log.writer()
        #expect(await writer.recovery.expired == [LogFixture.day])
        #expect(await Set(writer.recovery.asideDeleted) == Set(names.suffix(3)))
        #expect(try contactsEntries(log) == [".lock"])
    }

    /// A copy that cannot be made: a directory where the copy is written (unlink fails with EISDIR
    /// even for root, unlike a read-only directory). Nothing is lost: the damage stays, only the
    /// partial record after it is cut, and new records go after it.
    @Test func damageThatCannotBeCopiedIsKeptNotCut() async throws {
        let log = try LogFixture()
        let good = try await writeGoodRecords(log)
        let expected = try log.records()
        let bad = Self.badRecords(1000)
        try AtomicFile.write(good + bad + Array(repeating: 7, count: 20), to: log.segmentPath(LogFixture.day))
        let blocker = log.data.path + "/contacts/.\(LogFixture.day).log.copying"
        try FileManager.default.createDirectory(atPath: blocker + "/inside", withIntermediateDirectories: true)

        let handler = InMemoryLogHandler()
        let writer = try log.writer(logger: Logger(label: "test", factory: { _ in handler }))
        let recovery = await writer.recovery
        #expect(recovery.copiedAside.isEmpty)
        #expect(recovery.damageKept[LogFixture.day] != nil)
        #expect(recovery.truncated[LogFixture.day] == 20)
        #expect(try AtomicFile.read(log.segmentPath(LogFixture.day), limit: 1 << 20) == good + bad)
        #expect(try damagedCopies(log).isEmpty)
        let line = try #require(handler.entries.first { $0.level == .error })
        #expect(line.metadata["bytes.damaged"] == "48000")

        // New records go after the damage; readers skip it as damage in the middle.
        let extra = aggregate(99, at: LogFixture.noon.adding(seconds: 3600))
        try await writer.append(window: window(at: extra.firstSeen, aggregates: 1), aggregates: [extra])
        let records = try log.records()
        #expect(Array(records.prefix(expected.count)) == expected)
        #expect(try log.aggregates().last == extra)
        #expect(try log.reader.verify().segments.first?.corruptRecords == 1000)
    }
}
