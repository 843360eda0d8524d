// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
import GaendTestSupport
import Logging
import Storage

/// A contact log in a temporary data directory, with a clock the test moves.
struct LogFixture {
    let directory: TemporaryDirectory
    let data: DataDirectory
    let clock: ManualClock
    let reader: ContactLogReader

    /// 2020-04-02T12:00:00Z.
    static let noon = UnixTime.vectorDay.adding(seconds: 12 * 3600)
    static let day = UTCDay(containing: noon)

    init(now: UnixTime = noon) throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.path + "/gaend")
        clock = ManualClock(now)
        reader = ContactLogReader(dataDirectory: data)
    }

    func writer(policy: DurabilityPolicy = .everyWindow, logger: Logger = quietLogger) throws -> ContactLogWriter {
        try ContactLogWriter(dataDirectory: data, clock: clock, policy: policy, logger: logger)
    }

    func segmentPath(_ day: UTCDay) -> String { data.path + "/contacts/\(day).log" }

    func records(in range: ClosedRange<UTCDay>? = nil) throws -> [ContactLogRecord] {
        var records = [ContactLogRecord]()
        try reader.forEachRecord(in: range) { records.append($0) }
        return records
    }

    func aggregates() throws -> [ContactAggregate] {
        try records().compactMap { if case .aggregate(let value) = $0 { return value } else { return nil } }
    }
}

let quietLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

/// An aggregate seen at `time` for two seconds, with RPI number `number`.
func aggregate(_ number: Int, at time: UnixTime, rssi: [Int8] = [-60, -70], previous: UnixTime? = nil) -> ContactAggregate {
    var summary = RSSISummary()
    rssi.forEach { summary.add($0) }
    return ContactAggregate(
        rpi: SyntheticContacts.rpi(seed: 7, number: number), aem: AssociatedEncryptedMetadata((9, 8, 7, UInt8(number & 0xFF))),
        firstSeen: time, lastSeen: time.adding(seconds: 2), reports: UInt16(rssi.count), rssi: summary,
        previousScanEnd: previous)
}

func window(at time: UnixTime, aggregates: Int, previous: UnixTime? = nil) -> ScanWindowRecord {
    ScanWindowRecord(
        start: time, end: time.adding(seconds: 4), reports: UInt32(aggregates * 5), exposureNotificationReports: UInt32(aggregates * 2),
        aggregates: UInt32(aggregates), previousScanEnd: previous, monotonicMilliseconds: 4000)
}
