// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import Foundation
import GaendTestSupport
import Replay
import SQLite
import Storage
import Testing

@Suite(.ownThreads) struct CaptureTests {
    static func payload(_ seed: UInt8) -> ExposureNotificationPayload {
        ExposureNotificationPayload(
            rpi: RollingProximityIdentifier(Bytes16([UInt8](repeating: seed, count: 16))!), aem: AssociatedEncryptedMetadata((seed, 1, 2, 3)))
    }

    static let noon = UnixTime(seconds: 1_596_110_400)

    @Test func twoPhonesHearEachOtherAndAStranger() throws {
        let directory = try TemporaryDirectory()
        var first = CaptureWriter()
        first.advertise(Self.payload(1), at: Self.noon)
        first.hear(Self.payload(2), rssi: -70, at: Self.noon.adding(seconds: 10))
        first.hear(Self.payload(9), rssi: -90, at: Self.noon.adding(seconds: 11))
        // Its own frame, reflected: not a sighting of itself.
        first.hear(Self.payload(1), rssi: -40, at: Self.noon.adding(seconds: 12))
        var second = CaptureWriter()
        second.advertise(Self.payload(2), at: Self.noon)
        second.hear(Self.payload(1), rssi: -65, at: Self.noon.adding(seconds: 20))
        second.hear(Self.payload(1), rssi: 127, at: Self.noon.adding(seconds: 21))
        try first.write(to: directory.path + "/01.btsnoop")
        try second.write(to: directory.path + "/02.btsnoop")
        let captures = [
            try CaptureSightings(path: directory.path + "/01.btsnoop", receiver: "01"),
            try CaptureSightings(path: directory.path + "/02.btsnoop", receiver: "02"),
        ]
        #expect(captures[0].advertised == [Self.payload(1)])
        #expect(captures[1].withoutRSSI == 1)
        // CEST to UTC.
        let rows = CaptureReplay.rows(captures, offsetSeconds: -7200)
        let utc = Self.noon.adding(seconds: -7200)
        #expect(
            rows == [
                RecordedSighting(time: utc.adding(seconds: 10), receiver: "01", transmitter: "02", rssi: -70),
                RecordedSighting(time: utc.adding(seconds: 11), receiver: "01", transmitter: "unknown", rssi: -90),
                RecordedSighting(time: utc.adding(seconds: 20), receiver: "02", transmitter: "01", rssi: -65),
            ])
        #expect(CaptureReplay.rows(captures, offsetSeconds: -7200, from: utc.adding(seconds: 11), until: utc.adding(seconds: 11)).count == 1)
    }

    /// The error reading `bytes` as a capture gives, or nil when it reads.
    static func error(reading bytes: [UInt8], at path: String) throws -> CaptureError? {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try CaptureSightings(path: path, receiver: "cut")
            return nil
        } catch {
            return error
        }
    }

    /// What `btmon -w` writes: the Linux monitor's datalink (2001), the packet's kind in the
    /// record's flags and no H4 type byte, the monitor's own notes between.
    @Test func btmonsMonitorFormatReads() throws {
        let directory = try TemporaryDirectory()
        var capture = CaptureWriter(datalink: CaptureWriter.monitor)
        // The monitor's kind in the flags' low 16 bits, controller 1 in the high 16.
        func record(_ opcode: UInt32, _ packet: [UInt8], at time: UnixTime) { capture.record(packet, at: time, flags: 0x0001_0000 | opcode) }
        let data = Self.payload(4).advertisingData(includingFlags: false)
        let report: [UInt8] = [0x02, 1, 0x03, 0x01] + [1, 2, 3, 4, 5, 0xC6] + [UInt8(data.count)] + data + [UInt8(bitPattern: Int8(-66))]
        record(12, Array("a system note".utf8), at: Self.noon)
        record(2, [0x0C, 0x20, 0x02, 0x01, 0x00], at: Self.noon)
        record(3, [0x3E, UInt8(report.count)] + report, at: Self.noon.adding(seconds: 1))
        record(8, [], at: Self.noon.adding(seconds: 1))
        try capture.write(to: directory.path + "/hci1.btsnoop")
        let sightings = try CaptureSightings(path: directory.path + "/hci1.btsnoop", receiver: "hci1")
        #expect(sightings.heard == [CaptureSightings.Heard(time: Self.noon.adding(seconds: 1), payload: Self.payload(4), rssi: -66)])
        #expect(sightings.scanSwitches.map(\.on) == [true])
        #expect(sightings.packets == 2)
    }

    @Test func aBadCaptureIsNamedByItsRecord() throws {
        let directory = try TemporaryDirectory()
        var capture = CaptureWriter()
        capture.hear(Self.payload(2), rssi: -70, at: Self.noon)
        capture.hear(Self.payload(3), rssi: -71, at: Self.noon)
        let path = directory.path + "/cut.btsnoop"
        func expect(_ bytes: [UInt8], record: Int, _ problem: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let error = try #require(try Self.error(reading: bytes, at: path), sourceLocation: sourceLocation)
            #expect(error.record == record, "\(error)", sourceLocation: sourceLocation)
            #expect(error.description.contains(problem), "\(error)", sourceLocation: sourceLocation)
            #expect(error.file == path, sourceLocation: sourceLocation)
        }
        try expect(Array(capture.bytes.dropLast(3)), record: 2, "cut short")
        try expect(Array(capture.bytes.prefix(10)), record: 0, "cut short")
        try expect(Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0, 1] + Array(capture.bytes.dropFirst(16)), record: 0, "datalink 1")
        try expect(Array("btsnooq\0".utf8) + Array(capture.bytes.dropFirst(8)), record: 0, "not a btsnoop capture")
        var huge = CaptureWriter()
        huge.bytes += CaptureWriter.be32(100_000) + CaptureWriter.be32(100_000) + [UInt8](repeating: 0, count: 16)
        try expect(huge.bytes, record: 1, "a packet of 100000 bytes")
        var typeless = CaptureWriter()
        typeless.record([0x09, 1, 2], at: Self.noon)
        try expect(typeless.bytes, record: 1, "H4 packet type 9")
        var early = CaptureWriter()
        early.bytes += CaptureWriter.be32(1) + CaptureWriter.be32(1) + CaptureWriter.be32(0) + CaptureWriter.be32(0) + CaptureWriter.be64(5) + [4]
        try expect(early.bytes, record: 1, "not a time from 1970")
    }
}

/// `CaptureImport`: a capture into a contact log as the scanner writes it, cut where GMS cuts
/// scans, with the RPIs heard.
@Suite(.ownThreads) struct CaptureImportTests {
    @Test func aCaptureBecomesScanWindowsOfTheRPIsHeard() async throws {
        let directory = try TemporaryDirectory()
        let noon = CaptureTests.noon
        var capture = CaptureWriter()
        capture.hear(CaptureTests.payload(2), rssi: -70, at: noon)
        capture.hear(CaptureTests.payload(2), rssi: -60, at: noon.adding(seconds: 4))
        capture.hear(CaptureTests.payload(3), rssi: -80, at: noon.adding(seconds: 5))
        // A non-GAEN report, counted in its window only.
        capture.record([0x04, 0x3E, 0x0F, 0x02, 1, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 3, 0x02, 0x01, 0x06, 0xB0], at: noon.adding(seconds: 6))
        // 30 s later: a second scan.
        capture.hear(CaptureTests.payload(2), rssi: -75, at: noon.adding(seconds: 36))
        try capture.write(to: directory.path + "/r.btsnoop")
        let sightings = try CaptureSightings(path: directory.path + "/r.btsnoop", receiver: "r")
        let data = DataDirectory(path: directory.path + "/data")
        _ = try data.prepare()
        let imported = try await CaptureImport.run(sightings, offsetSeconds: -7200, rssiCorrection: 0, into: data)
        #expect(imported == CaptureImport.Imported(windows: 2, aggregates: 3, reports: 5))
        var windows = [ScanWindowRecord]()
        var aggregates = [ContactAggregate]()
        try ContactLogReader(dataDirectory: data).forEachRecord { record in
            switch record {
            case .scanWindow(let window): windows.append(window)
            case .aggregate(let aggregate): aggregates.append(aggregate)
            }
        }
        let utc = noon.adding(seconds: -7200)
        #expect(windows.map(\.start) == [utc, utc.adding(seconds: 36)])
        #expect(windows.first?.reports == 4 && windows.first?.exposureNotificationReports == 3)
        #expect(windows.first?.monotonicMilliseconds == 6000)
        #expect(windows.last?.previousScanEnd == utc.adding(seconds: 6))
        let first = aggregates.first { $0.rpi == CaptureTests.payload(2).rpi && $0.firstSeen == utc }
        #expect(first?.rssi.maximum == -60 && first?.reports == 2 && first?.lastSeen == utc.adding(seconds: 4))
        #expect(aggregates.count == 3)
    }
}

/// A capture of the host's side holds its scan switches: the scans are the host's, not cut by
/// gaps, and a report that arrives while scanning is off is counted, not written.
@Suite(.ownThreads) struct HostScanImportTests {
    @Test func theHostsScanSwitchesMakeTheWindows() async throws {
        let directory = try TemporaryDirectory()
        let noon = CaptureTests.noon
        var capture = CaptureWriter()
        // LE Set Scan Enable on, two reports a second apart, off; a report before the off's
        // completion (the scan's, as gaend's scanner counts it) and one after (in flight: counted,
        // not written); on again (the extended command), a report 40 s later (no gap cut here),
        // and the capture ends.
        capture.record([0x01, 0x0C, 0x20, 0x02, 0x01, 0x00], at: noon)
        capture.hear(CaptureTests.payload(2), rssi: -70, at: noon.adding(seconds: 1))
        capture.hear(CaptureTests.payload(2), rssi: -60, at: noon.adding(seconds: 2))
        capture.record([0x01, 0x0C, 0x20, 0x02, 0x00, 0x00], at: noon.adding(seconds: 3))
        capture.hear(CaptureTests.payload(3), rssi: -81, at: UnixTime(milliseconds: noon.milliseconds + 3500))
        capture.record([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], at: UnixTime(milliseconds: noon.milliseconds + 3800))
        capture.hear(CaptureTests.payload(3), rssi: -80, at: noon.adding(seconds: 4))
        capture.record([0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00], at: noon.adding(seconds: 10))
        capture.hear(CaptureTests.payload(3), rssi: -75, at: noon.adding(seconds: 50))
        try capture.write(to: directory.path + "/h.btsnoop")
        let sightings = try CaptureSightings(path: directory.path + "/h.btsnoop", receiver: "h")
        #expect(sightings.scanSwitches.map(\.on) == [true, false, true])
        let data = DataDirectory(path: directory.path + "/data")
        _ = try data.prepare()
        let imported = try await CaptureImport.run(sightings, offsetSeconds: 0, rssiCorrection: 0, into: data)
        #expect(imported == CaptureImport.Imported(windows: 2, aggregates: 3, reports: 4, outsideScans: 1))
        var windows = [ScanWindowRecord]()
        try ContactLogReader(dataDirectory: data).forEachRecord { record in
            if case .scanWindow(let window) = record { windows.append(window) }
        }
        #expect(windows.map(\.start) == [noon, noon.adding(seconds: 10)])
        #expect(windows.first?.end == UnixTime(milliseconds: noon.milliseconds + 3800))
        #expect(windows.last?.end == noon.adding(seconds: 50))
        #expect(windows.last?.previousScanEnd == UnixTime(milliseconds: noon.milliseconds + 3800))
    }
}

/// Experiment 34's 18 captures, as SOURCES.md counts them: 84,456 sightings of the logged phones'
/// advertisements and 103,137 of devices without a capture.
@Suite(.ownThreads) struct ExperimentCaptureTests {
    static let pcaps = ExperimentReplayTests.folder + "/pcaps"

    @Test func theCapturesHoldWhatSourcesCounts() throws {
        guard FileManager.default.fileExists(atPath: Self.pcaps) else {
            print("ExperimentCaptureTests: skipped: \(Self.pcaps) is absent")
            return
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.pcaps).filter { $0.hasSuffix(".btsnoop") }.sorted()
        #expect(names.count == 18)
        let captures = try names.map { try CaptureSightings(path: Self.pcaps + "/" + $0, receiver: String($0.dropLast(8))) }
        let rows = CaptureReplay.rows(captures, offsetSeconds: -7200)
        let known = rows.filter { $0.transmitter != CaptureReplay.unknownTransmitter }
        #expect(known.count == 84_456)
        #expect(rows.count - known.count == 103_137)
        // DP-3T's own processing read the same logs: every sqlite row of the six scenarios is a
        // sighting of the captures, the same receiver, transmitter, RSSI and time (the rows keep
        // the microseconds, the captures' rows the milliseconds).
        func key(_ receiver: String, _ transmitter: String, _ milliseconds: Int64, _ rssi: Int8) -> String {
            "\(Int(receiver) ?? -1) \(Int(transmitter) ?? -1) \(milliseconds) \(rssi)"
        }
        let heard = Set(known.map { key($0.receiver, $0.transmitter, $0.time.milliseconds, $0.rssi) })
        var sqliteRows = 0
        var missing = [String]()
        for scenario in ExperimentTraces.scenarios {
            let path = ExperimentReplayTests.folder + "/scenario\(scenario).sqlite"
            for row in try SQLiteDatabase(path: path).query("SELECT timestamp, receiver_id, transmitter_id, rssi FROM results") {
                guard let seconds = row[0].real, let receiver = row[1].text, let transmitter = row[2].text,
                    let rssi = row[3].integer.flatMap(Int8.init(exactly:))
                else { continue }
                sqliteRows += 1
                let milliseconds = Int64((seconds * 1000).rounded(.down))
                if !heard.contains(key(receiver, transmitter, milliseconds, rssi)), !heard.contains(key(receiver, transmitter, milliseconds - 1, rssi)) {
                    missing.append("\(scenario): \(receiver) heard \(transmitter) at \(seconds), \(rssi) dBm")
                }
            }
        }
        #expect(sqliteRows == 34_835)
        #expect(missing.isEmpty, "\(missing.count) of \(sqliteRows) sqlite rows not in the captures: \(missing.prefix(5))")

        // Every logged phone advertised, and everything was heard on 30 July 2020 (UTC).
        #expect(captures.allSatisfy { !$0.advertised.isEmpty })
        #expect(Set(rows.map { UTCDay(containing: $0.time).description }) == ["2020-07-30"])
    }
}
