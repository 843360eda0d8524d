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
            raw.storeBytes(of: SegmentFormat.RecordType.aggregate.rawValue, toByteOffset: 0, as: UInt8.self)
            raw.storeBytes(of: noValidRSSI ? SegmentFormat.flagNoValidRSSI : 0, toByteOffset: 1, as: UInt8.self)
            raw.storeBytes(of: noValidRSSI ? 0 : aggregate.rssi.maximum ?? 0, toByteOffset: 2, as: Int8.self)
            aggregate.rpi.bytes.store(to: raw.baseAddress! + 4)
            let aem = aggregate.aem.bytes
            raw.storeBytes(of: aem.0, toByteOffset: 20, as: UInt8.self)
            raw.storeBytes(of: aem.1, toByteOffset: 21, as: UInt8.self)
            raw.storeBytes(of: aem.2, toByteOffset: 22, as: UInt8.self)
            raw.storeBytes(of: aem.3, toByteOffset: 23, as: UInt8.self)
            raw.storeBytes(of: first.littleEndian, toByteOffset: 24, as: UInt32.self)
            raw.storeBytes(of: last.littleEndian, toByteOffset: 28, as: UInt32.self)
            raw.storeBytes(of: aggregate.reports.littleEndian, toByteOffset: 32, as: UInt16.self)
            raw.storeBytes(of: aggregate.rssi.validReports.littleEndian, toByteOffset: 34, as: UInt16.self)
            raw.storeBytes(of: (noValidRSSI ? 0 : aggregate.rssi.sum).littleEndian, toByteOffset: 36, as: Int32.self)
            raw.storeBytes(of: previousScanOffset(aggregate.previousScanEnd, day: day).littleEndian, toByteOffset: 40, as: Int32.self)
        }
    }

    /// Appends the record of `window` to `bytes`; the window must belong to `day`.
    static func append(_ window: ScanWindowRecord, day: UTCDay, to bytes: inout [UInt8]) throws(Refusal) {
        let (start, end) = try offsets(start: window.start, end: window.end, day: day, what: "scan window")
        try appendRecord(to: &bytes) { raw in
            raw.storeBytes(of: SegmentFormat.RecordType.scanWindow.rawValue, toByteOffset: 0, as: UInt8.self)
            raw.storeBytes(of: start.littleEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: end.littleEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: window.reports.littleEndian, toByteOffset: 12, as: UInt32.self)
            raw.storeBytes(of: window.exposureNotificationReports.littleEndian, toByteOffset: 16, as: UInt32.self)
            raw.storeBytes(of: window.aggregates.littleEndian, toByteOffset: 20, as: UInt32.self)
            raw.storeBytes(of: previousScanOffset(window.previousScanEnd, day: day).littleEndian, toByteOffset: 24, as: Int32.self)
            raw.storeBytes(of: window.monotonicMilliseconds.littleEndian, toByteOffset: 28, as: UInt32.self)
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
        let type = raw.load(as: UInt8.self)
        switch SegmentFormat.RecordType(rawValue: type) {
        case .aggregate:
            let first = time(24)
            let last = time(28)
            try checkSpan(first: first, last: last, day: day, what: "aggregate")
            let flags = raw.load(fromByteOffset: 1, as: UInt8.self)
            let noValidRSSI = flags & SegmentFormat.flagNoValidRSSI != 0
            let aem = (
                raw.load(fromByteOffset: 20, as: UInt8.self), raw.load(fromByteOffset: 21, as: UInt8.self),
                raw.load(fromByteOffset: 22, as: UInt8.self), raw.load(fromByteOffset: 23, as: UInt8.self)
            )
            let rssi =
                noValidRSSI
                ? RSSISummary()
                : RSSISummary(
                    maximum: raw.load(fromByteOffset: 2, as: Int8.self),
                    sum: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 36, as: Int32.self)),
                    validReports: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 34, as: UInt16.self)))
            return .aggregate(
                ContactAggregate(
                    rpi: RollingProximityIdentifier(Bytes16(loadingFrom: raw + 4)),
                    aem: AssociatedEncryptedMetadata(aem), firstSeen: first, lastSeen: last,
                    reports: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 32, as: UInt16.self)),
                    rssi: rssi, previousScanEnd: previous(40)))
        case .scanWindow:
            let start = time(4)
            let end = time(8)
            try checkSpan(first: start, last: end, day: day, what: "scan window")
            return .scanWindow(
                ScanWindowRecord(
                    start: start, end: end,
                    reports: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self)),
                    exposureNotificationReports: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
                    aggregates: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self)),
                    previousScanEnd: previous(24),
                    monotonicMilliseconds: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 28, as: UInt32.self))))
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
