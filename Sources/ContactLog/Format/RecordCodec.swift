// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Storage

/// Encodes and decodes the 48-byte records of a segment (layout in docs/contact-log.md).
enum RecordCodec {
    /// Why a record was refused, on writing or on reading.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// A time that does not fall in the segment's UTC day, or a span longer than an hour, or an
        /// end before a start.
        case outOfDay(String)
        /// The checksum does not match, or the record type is unknown: damage.
        case corrupt(String)

        var description: String {
            switch self {
            case .outOfDay(let reason), .corrupt(let reason): return reason
            }
        }
    }

    // MARK: Encoding

    /// Appends the record of `aggregate` to `bytes`; the aggregate must belong to `day`.
    static func append(_ aggregate: ContactAggregate, day: UTCDay, to bytes: inout [UInt8]) throws(Refusal) {
        let (first, last) = try offsets(start: aggregate.firstSeen, end: aggregate.lastSeen, day: day, what: "aggregate")
        let noValidRSSI = aggregate.rssi.validReports == 0
        try appendRecord(to: &bytes) { raw in
            typealias Field = SegmentFormat.AggregateField
            raw.storeBytes(of: SegmentFormat.RecordType.aggregate.rawValue, toByteOffset: Field.type, as: UInt8.self)
            raw.storeBytes(of: noValidRSSI ? SegmentFormat.flagNoValidRSSI : 0, toByteOffset: Field.flags, as: UInt8.self)
            raw.storeBytes(of: noValidRSSI ? 0 : aggregate.rssi.maximum ?? 0, toByteOffset: Field.rssiMaximum, as: Int8.self)
            aggregate.rpi.bytes.store(to: raw.baseAddress! + Field.rpi)
            let aem = aggregate.aem.bytes
            raw.storeBytes(of: aem.0, toByteOffset: Field.aem, as: UInt8.self)
            raw.storeBytes(of: aem.1, toByteOffset: Field.aem + 1, as: UInt8.self)
            raw.storeBytes(of: aem.2, toByteOffset: Field.aem + 2, as: UInt8.self)
            raw.storeBytes(of: aem.3, toByteOffset: Field.aem + 3, as: UInt8.self)
            raw.storeBytes(of: first.littleEndian, toByteOffset: Field.firstSeen, as: UInt32.self)
            raw.storeBytes(of: last.littleEndian, toByteOffset: Field.lastSeen, as: UInt32.self)
            raw.storeBytes(of: aggregate.reports.littleEndian, toByteOffset: Field.reports, as: UInt16.self)
            raw.storeBytes(of: aggregate.rssi.validReports.littleEndian, toByteOffset: Field.validReports, as: UInt16.self)
            raw.storeBytes(of: (noValidRSSI ? 0 : aggregate.rssi.sum).littleEndian, toByteOffset: Field.rssiSum, as: Int32.self)
            raw.storeBytes(
                of: previousScanOffset(aggregate.previousScanEnd, day: day).littleEndian, toByteOffset: Field.previousScanEnd, as: Int32.self)
        }
    }

    /// Appends the record of `window` to `bytes`; the window must belong to `day`.
    static func append(_ window: ScanWindowRecord, day: UTCDay, to bytes: inout [UInt8]) throws(Refusal) {
        let (start, end) = try offsets(start: window.start, end: window.end, day: day, what: "scan window")
        try appendRecord(to: &bytes) { raw in
            typealias Field = SegmentFormat.ScanWindowField
            raw.storeBytes(of: SegmentFormat.RecordType.scanWindow.rawValue, toByteOffset: Field.type, as: UInt8.self)
            raw.storeBytes(of: start.littleEndian, toByteOffset: Field.start, as: UInt32.self)
            raw.storeBytes(of: end.littleEndian, toByteOffset: Field.end, as: UInt32.self)
            raw.storeBytes(of: window.reports.littleEndian, toByteOffset: Field.reports, as: UInt32.self)
            raw.storeBytes(of: window.exposureNotificationReports.littleEndian, toByteOffset: Field.exposureNotificationReports, as: UInt32.self)
            raw.storeBytes(of: window.aggregates.littleEndian, toByteOffset: Field.aggregates, as: UInt32.self)
            raw.storeBytes(of: previousScanOffset(window.previousScanEnd, day: day).littleEndian, toByteOffset: Field.previousScanEnd, as: Int32.self)
            raw.storeBytes(of: window.monotonicMilliseconds.littleEndian, toByteOffset: Field.monotonicMilliseconds, as: UInt32.self)
            raw.storeBytes(of: window.droppedReports.littleEndian, toByteOffset: Field.droppedReports, as: UInt32.self)
            raw.storeBytes(of: window.droppedRPIs.littleEndian, toByteOffset: Field.droppedRPIs, as: UInt32.self)
        }
    }

    private static func appendRecord(
        to bytes: inout [UInt8], _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(Refusal) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: SegmentFormat.recordSize))
        bytes.withUnsafeMutableBytes { all in
            let raw = UnsafeMutableRawBufferPointer(rebasing: all[start..<(start + SegmentFormat.recordSize)])
            fill(raw)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<SegmentFormat.checkedSize]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: SegmentFormat.checkedSize, as: UInt32.self)
        }
    }

    /// Start and end as millisecond offsets into `day`, or the reason they cannot be stored there.
    private static func offsets(start: UnixTime, end: UnixTime, day: UTCDay, what: String) throws(Refusal) -> (UInt32, UInt32) {
        let first = start.milliseconds - day.start.milliseconds
        let last = end.milliseconds - day.start.milliseconds
        guard (0..<SegmentFormat.millisecondsPerDay).contains(first) else {
            throw .outOfDay("\(what) starting \(start) is outside \(day)")
        }
        guard last >= first, last - first <= SegmentFormat.maximumSpanMilliseconds else {
            throw .outOfDay("\(what) from \(start) to \(end) does not span 0...3600 s")
        }
        return (UInt32(first), UInt32(last))
    }

    private static func previousScanOffset(_ time: UnixTime?, day: UTCDay) -> Int32 {
        guard let time else { return SegmentFormat.unknownPreviousScanEnd }
        let offset = time.milliseconds - day.start.milliseconds
        // Older than ~24 days back (or absurdly ahead) is as good as unknown for scoring.
        guard offset > Int64(Int32.min), offset <= Int64(Int32.max) else { return SegmentFormat.unknownPreviousScanEnd }
        return Int32(offset)
    }

    // MARK: Decoding

    /// Whether the record at `raw` (48 bytes) is intact: its checksum matches.
    @inline(__always)
    static func isIntact(_ raw: UnsafeRawPointer) -> Bool {
        let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: SegmentFormat.checkedSize, as: UInt32.self))
        return stored == CRC32C.checksum(UnsafeRawBufferPointer(start: raw, count: SegmentFormat.checkedSize))
    }

    /// Decodes an intact record of `day`.
    static func decode(_ raw: UnsafeRawPointer, day: UTCDay) throws(Refusal) -> ContactLogRecord {
        let base = day.start.milliseconds
        func time(_ offset: Int) -> UnixTime {
            UnixTime(milliseconds: base + Int64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
        }
        func previous(_ offset: Int) -> UnixTime? {
            let value = Int32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self))
            return value == SegmentFormat.unknownPreviousScanEnd ? nil : UnixTime(milliseconds: base + Int64(value))
        }
        let type = raw.load(fromByteOffset: SegmentFormat.AggregateField.type, as: UInt8.self)
        switch SegmentFormat.RecordType(rawValue: type) {
        case .aggregate:
            typealias Field = SegmentFormat.AggregateField
            let first = time(Field.firstSeen)
            let last = time(Field.lastSeen)
            try checkSpan(first: first, last: last, day: day, what: "aggregate")
            let flags = raw.load(fromByteOffset: Field.flags, as: UInt8.self)
            let noValidRSSI = flags & SegmentFormat.flagNoValidRSSI != 0
            let aem = (
                raw.load(fromByteOffset: Field.aem, as: UInt8.self), raw.load(fromByteOffset: Field.aem + 1, as: UInt8.self),
                raw.load(fromByteOffset: Field.aem + 2, as: UInt8.self), raw.load(fromByteOffset: Field.aem + 3, as: UInt8.self)
            )
            let rssi =
                noValidRSSI
                ? RSSISummary()
                : RSSISummary(
                    maximum: raw.load(fromByteOffset: Field.rssiMaximum, as: Int8.self),
                    sum: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.rssiSum, as: Int32.self)),
                    validReports: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: Field.validReports, as: UInt16.self)))
            return .aggregate(
                ContactAggregate(
                    rpi: RollingProximityIdentifier(Bytes16(loadingFrom: raw + Field.rpi)),
                    aem: AssociatedEncryptedMetadata(aem), firstSeen: first, lastSeen: last,
                    reports: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: Field.reports, as: UInt16.self)),
                    rssi: rssi, previousScanEnd: previous(Field.previousScanEnd)))
        case .scanWindow:
            typealias Field = SegmentFormat.ScanWindowField
            let start = time(Field.start)
            let end = time(Field.end)
            try checkSpan(first: start, last: end, day: day, what: "scan window")
            return .scanWindow(
                ScanWindowRecord(
                    start: start, end: end,
                    reports: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.reports, as: UInt32.self)),
                    exposureNotificationReports: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.exposureNotificationReports, as: UInt32.self)),
                    aggregates: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.aggregates, as: UInt32.self)),
                    previousScanEnd: previous(Field.previousScanEnd),
                    monotonicMilliseconds: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.monotonicMilliseconds, as: UInt32.self)),
                    droppedReports: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.droppedReports, as: UInt32.self)),
                    droppedRPIs: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Field.droppedRPIs, as: UInt32.self))))
        case nil:
            throw .corrupt("unknown record type \(type)")
        }
    }

    private static func checkSpan(first: UnixTime, last: UnixTime, day: UTCDay, what: String) throws(Refusal) {
        let offset = first.milliseconds - day.start.milliseconds
        guard offset < SegmentFormat.millisecondsPerDay else {
            throw .outOfDay("\(what) at \(first) is outside \(day)")
        }
        guard last >= first, last.milliseconds - first.milliseconds <= SegmentFormat.maximumSpanMilliseconds else {
            throw .outOfDay("\(what) from \(first) to \(last) does not span 0...3600 s")
        }
    }
}
