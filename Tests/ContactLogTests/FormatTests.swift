// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Storage
import Testing

@Suite(.ownThreads) struct FormatTests {
    @Test func recordsRoundTripAt48BytesEach() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let start = LogFixture.noon
        let previous = start.adding(seconds: -250)
        let written = [
            aggregate(1, at: start, previous: previous),
            aggregate(2, at: start.adding(seconds: 1), rssi: [-45, 127, -50], previous: previous),
            aggregate(3, at: start.adding(seconds: 3), rssi: [127, 127], previous: previous),
        ]
        let scan = window(at: start, aggregates: 3, previous: previous)
        #expect(try await writer.append(window: scan, aggregates: written) == 3)

        let records = try log.records()
        #expect(records == written.map { .aggregate($0) } + [.scanWindow(scan)])
        // 48-byte header, then 48 bytes per record: four records.
        #expect(try AtomicFile.size(of: log.segmentPath(LogFixture.day)) == 48 * 5)
    }

    @Test func rssi127IsStoredAsInvalidNotAsANumber() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        let noReading = aggregate(1, at: LogFixture.noon, rssi: [127, 127, 127])
        let mixed = aggregate(2, at: LogFixture.noon, rssi: [-50, 127, -70])
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 2), aggregates: [noReading, mixed])
        let read = try log.aggregates()
        #expect(read[0].reports == 3)
        #expect(read[0].rssi.maximum == nil)
        #expect(read[0].rssi.validReports == 0)
        #expect(read[0].rssi.mean == nil)
        #expect(read[1].reports == 3)
        #expect(read[1].rssi.maximum == -50)
        #expect(read[1].rssi.validReports == 2)
        #expect(read[1].rssi.mean == -60)
    }

    @Test func unknownPreviousScanSurvives() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [aggregate(1, at: LogFixture.noon)])
        #expect(try log.aggregates().first?.previousScanEnd == nil)
    }

    @Test func filesArePrivate() async throws {
        let log = try LogFixture()
        let writer = try log.writer()
        try await writer.append(window: window(at: LogFixture.noon, aggregates: 1), aggregates: [aggregate(1, at: LogFixture.noon)])
        #expect(try AtomicFile.mode(of: log.data.path) == 0o700)
        #expect(try AtomicFile.mode(of: log.data.path + "/contacts") == 0o700)
        #expect(try AtomicFile.mode(of: log.segmentPath(LogFixture.day)) == 0o600)
    }

    @Test func aSecondWriterIsKeptOut() throws {
        let log = try LogFixture()
        let first = try log.writer()
        #expect {
            _ = try log.writer()
        } throws: { error in
            guard case ContactLogError.locked = error else { return false }
            return true
        }
        withExtendedLifetime(first) {}
    }

    @Test func aWindowAcrossMidnightFilesEachRecordUnderItsOwnDay() async throws {
        let beforeMidnight = LogFixture.day.advanced(by: 1).start.adding(seconds: -2)
        let log = try LogFixture(now: beforeMidnight)
        let writer = try log.writer()
        let early = aggregate(1, at: beforeMidnight)
        let late = aggregate(2, at: beforeMidnight.adding(seconds: 3))
        try await writer.append(window: window(at: beforeMidnight, aggregates: 2), aggregates: [early, late])
        #expect(try log.reader.days() == [LogFixture.day, LogFixture.day.advanced(by: 1)])
        #expect(try log.records(in: LogFixture.day...LogFixture.day).count == 2)  // early + window
        #expect(try log.records(in: LogFixture.day.advanced(by: 1)...LogFixture.day.advanced(by: 1)) == [.aggregate(late)])
    }
}
