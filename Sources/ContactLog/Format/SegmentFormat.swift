// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Storage

/// The byte layout of a day segment, `contacts/YYYY-MM-DD.log` (docs/contact-log.md has it as a table).
///
/// A segment is a 48-byte header and then 48-byte records, each carrying its own CRC-32C, so that any
/// record can be judged on its own: whole and valid, or not there. Times are stored as milliseconds
/// from the segment day's UTC midnight, which is what keeps a record within 48 bytes.
enum SegmentFormat {
    static let magic: [UInt8] = Array("GAENCLOG".utf8)
    static let version: UInt16 = 1
    static let recordSize = 48
    static let headerSize = 48
    /// Bytes a record's checksum covers.
    static let checkedSize = 44

    static let millisecondsPerDay: Int64 = 86_400_000
    /// The longest a window or an aggregate may last; longer means a broken clock or a broken caller.
    static let maximumSpanMilliseconds: Int64 = 3_600_000
    /// Stored in the previous-scan-end field when it is unknown (or too far back to store).
    static let unknownPreviousScanEnd = Int32.min

    enum RecordType: UInt8 {
        case aggregate = 1
        case scanWindow = 2
    }

    /// Aggregate flag: no report had a valid RSSI, so maximum and sum mean nothing.
    static let flagNoValidRSSI: UInt8 = 0x01

    /// Where each field of the header starts (docs/contact-log.md, "Header").
    enum HeaderField {
        static let magic = 0
        static let version = 8
        static let recordSize = 10
        static let day = 12
    }

    /// Where each field of an aggregate record starts (docs/contact-log.md, "Aggregate record").
    enum AggregateField {
        static let type = 0
        static let flags = 1
        static let rssiMaximum = 2
        /// Reserved (0) in the file; the matching index keeps the record's day there.
        static let reserved = 3
        static let rpi = 4
        static let aem = 20
        static let firstSeen = 24
        static let lastSeen = 28
        static let reports = 32
        static let validReports = 34
        static let rssiSum = 36
        static let previousScanEnd = 40
        /// The CRC-32C of the bytes before it; the matching index reuses it as a link.
        static let checksum = checkedSize
    }

    /// Where each field of a scan-window record starts (docs/contact-log.md, "Scan window record").
    enum ScanWindowField {
        static let type = 0
        static let start = 4
        static let end = 8
        static let reports = 12
        static let exposureNotificationReports = 16
        static let aggregates = 20
        static let previousScanEnd = 24
        static let monotonicMilliseconds = 28
        /// GAEN reports not kept because the window was over its cap of distinct RPIs (0 from
        /// writers before the cap, which dropped nothing).
        static let droppedReports = 32
        /// RPIs turned away or evicted when the window was over its cap.
        static let droppedRPIs = 36
    }

    // MARK: Header

    static func header(for day: UTCDay) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: headerSize)
        bytes.withUnsafeMutableBytes { raw in
            for (index, byte) in magic.enumerated() { raw[HeaderField.magic + index] = byte }
            raw.storeBytes(of: version.littleEndian, toByteOffset: HeaderField.version, as: UInt16.self)
            raw.storeBytes(of: UInt16(recordSize).littleEndian, toByteOffset: HeaderField.recordSize, as: UInt16.self)
            raw.storeBytes(of: Int32(truncatingIfNeeded: day.daysSinceEpoch).littleEndian, toByteOffset: HeaderField.day, as: Int32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<checkedSize]))
            raw.storeBytes(of: crc.littleEndian, toByteOffset: checkedSize, as: UInt32.self)
        }
        return bytes
    }

    enum HeaderProblem: Error, Equatable, CustomStringConvertible {
        case tooShort(Int)
        case badMagic
        case badChecksum
        /// The checksum fails, but the magic, version 1, the record size and the file's day are
        /// all there: only reserved bytes (or the checksum) can differ, so the records, each with
        /// its own CRC-32C and filed by the name's day, are read (issue 40: one flipped reserved
        /// byte hid a whole day from matching).
        case checksumOnly
        case unsupportedVersion(UInt16)
        case unsupportedRecordSize(UInt16)
        case dayMismatch(file: Int64, header: Int64)

        var description: String {
            switch self {
            case .tooShort(let count): return "\(count) bytes, shorter than the 48-byte header"
            case .badMagic: return "it does not start with the magic GAENCLOG"
            case .badChecksum: return "the header checksum does not match"
            case .checksumOnly: return "the header checksum does not match, but its fields are version 1's for this day"
            case .unsupportedVersion(let version): return "format version \(version), newer than this gaend reads (1)"
            case .unsupportedRecordSize(let size): return "record size \(size), not 48"
            case .dayMismatch(let file, let header):
                return "the header says day \(ISO8601.formatDate(daysSinceEpoch: header)) but the file is named for \(ISO8601.formatDate(daysSinceEpoch: file))"
            }
        }
    }

    /// Checks a header read from a file named for `day`.
    static func checkHeader(_ raw: UnsafeRawBufferPointer, day: UTCDay) -> HeaderProblem? {
        guard raw.count >= headerSize else { return .tooShort(raw.count) }
        guard raw.prefix(8).elementsEqual(magic) else { return .badMagic }
        let crc = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: checkedSize, as: UInt32.self))
        let checked = crc == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<checkedSize]))
        let version = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: HeaderField.version, as: UInt16.self))
        let size = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: HeaderField.recordSize, as: UInt16.self))
        let headerDay = Int64(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: HeaderField.day, as: Int32.self)))
        let fieldsHold = version == Self.version && size == recordSize && headerDay == day.daysSinceEpoch
        guard checked else { return fieldsHold ? .checksumOnly : .badChecksum }
        guard version == Self.version else { return .unsupportedVersion(version) }
        guard size == recordSize else { return .unsupportedRecordSize(size) }
        guard headerDay == day.daysSinceEpoch else { return .dayMismatch(file: day.daysSinceEpoch, header: headerDay) }
        return nil
    }

    // MARK: File names

    static let fileSuffix = ".log"

    static func fileName(for day: UTCDay) -> String { "\(day)\(fileSuffix)" }

    /// The day of a segment file name, `nil` for any other name.
    static func day(ofFileName name: String) -> UTCDay? {
        guard name.hasSuffix(fileSuffix) else { return nil }
        return UTCDay(parsing: name.dropLast(fileSuffix.count))
    }
}
