// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Storage

/// The held-sightings file: scan windows heard while the wall clock could not be trusted, their
/// times on the boot clock (milliseconds since boot) of the boot named in the header.
///
/// Header: `GAENHELD`, format version (u16), the boot id (36 ASCII bytes). Then entries, each its
/// payload's length (u32) and CRC-32C (u32), then the payload: the window (start, end i64; reports,
/// GAEN reports, aggregates u32; previous scan end i64, `Int64.min` for none; monotonic length u32)
/// and its aggregates, as many as the window says (RPI 16 bytes, AEM 4, first and last seen i64,
/// reports u16, maximum RSSI i8 and whether there is one u8, RSSI sum i32, valid reports u16,
/// previous scan end i64). Little-endian throughout. A reader stops at the first frame that does
/// not check (its length past the end, or its CRC-32C wrong): what follows a torn write is not
/// trusted. A frame that checks but whose window it refuses (too many aggregates, a length that
/// does not fit them) is skipped and counted, and the entries after it are read (issue 40: one
/// refused entry took every later one with it).
package enum HeldFormat {
    package static let magic = Array("GAENHELD".utf8)
    package static let version: UInt16 = 1
    package static let headerSize = 8 + 2 + 36
    static let windowSize = 40
    static let aggregateSize = 54
    /// An entry's aggregates, for the reader and the writer alike: twice a scan window's own cap
    /// (`ScanWindowAggregator.maximumRPIs`), which `HeldSightings.hold` enforces before writing.
    package static let maximumAggregates = 10_000
    /// The file is read whole; 24 h of busy scanning stays well under this.
    package static let maximumFileSize = 256 << 20

    package struct Entry: Equatable, Sendable {
        package var window: ScanWindowRecord
        package var aggregates: [ContactAggregate]

        package init(window: ScanWindowRecord, aggregates: [ContactAggregate]) {
            self.window = window
            self.aggregates = aggregates
        }
    }

    package struct Contents: Equatable, Sendable {
        package var bootID: String
        package var entries: [Entry]
        /// Bytes after the last entry that checked (a torn or damaged tail).
        package var damagedBytes: Int
        /// Entries whose frame checked but whose window was refused, skipped.
        package var refusedEntries = 0
    }

    package enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case notHeldFile
        case unsupportedVersion(UInt16)

        package var description: String {
            switch self {
            case .notHeldFile: "not a held-sightings file (header)"
            case .unsupportedVersion(let version): "held-sightings format version \(version), newer than this gaend reads (1)"
            }
        }
    }

    package static func header(bootID: String) -> [UInt8] {
        var writer = LittleEndianWriter()
        writer.bytes += magic
        writer.put(version)
        let id = Array(bootID.utf8.prefix(36))
        writer.bytes += id + [UInt8](repeating: 0x20, count: 36 - id.count)
        return writer.bytes
    }

    package static func encode(_ entry: Entry) -> [UInt8] {
        var payload = LittleEndianWriter()
        let window = entry.window
        payload.put(window.start.milliseconds)
        payload.put(window.end.milliseconds)
        payload.put(window.reports)
        payload.put(window.exposureNotificationReports)
        payload.put(UInt32(entry.aggregates.count))
        payload.put(window.previousScanEnd?.milliseconds ?? Int64.min)
        payload.put(window.monotonicMilliseconds)
        for aggregate in entry.aggregates {
            payload.bytes += aggregate.rpi.bytes.bytes
            payload.bytes += aggregate.aem.array
            payload.put(aggregate.firstSeen.milliseconds)
            payload.put(aggregate.lastSeen.milliseconds)
            payload.put(aggregate.reports)
            payload.bytes.append(UInt8(bitPattern: aggregate.rssi.maximum ?? 0))
            payload.bytes.append(aggregate.rssi.maximum == nil ? 0 : 1)
            payload.put(aggregate.rssi.sum)
            payload.put(aggregate.rssi.validReports)
            payload.put(aggregate.previousScanEnd?.milliseconds ?? Int64.min)
        }
        var framed = LittleEndianWriter()
        framed.put(UInt32(payload.bytes.count))
        framed.put(CRC32C.checksum(payload.bytes))
        return framed.bytes + payload.bytes
    }

    /// Reads a whole file: its boot id and every entry up to the first that does not check.
    package static func decode(_ bytes: [UInt8]) throws(Refusal) -> Contents {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic else { throw .notHeldFile }
        var reader = LittleEndianReader(bytes: bytes[8...])
        let version: UInt16 = reader.take() ?? 0
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let bootID = String(decoding: bytes[10..<headerSize], as: UTF8.self).trimmingTrailingSpaces()
        var entries: [Entry] = []
        var refused = 0
        var offset = headerSize
        while offset < bytes.count {
            guard let payload = frame(in: bytes, at: &offset) else { break }
            if let entry = entry(payload) {
                entries.append(entry)
            } else {
                refused += 1
            }
        }
        return Contents(bootID: bootID, entries: entries, damagedBytes: bytes.count - offset, refusedEntries: refused)
    }

    /// The payload of the frame at `offset` (moved past it), or nil when the frame does not check.
    private static func frame(in bytes: [UInt8], at offset: inout Int) -> ArraySlice<UInt8>? {
        var frame = LittleEndianReader(bytes: bytes[offset...])
        guard let length: UInt32 = frame.take(), let checksum: UInt32 = frame.take() else { return nil }
        let start = offset + 8
        guard Int(length) <= bytes.count - start else { return nil }
        let payload = bytes[start..<(start + Int(length))]
        guard CRC32C.checksum(payload) == checksum else { return nil }
        offset = start + Int(length)
        return payload
    }

    /// The entry a checked payload holds, or nil when its window is refused.
    private static func entry(_ payload: ArraySlice<UInt8>) -> Entry? {
        let length = payload.count
        guard length >= windowSize else { return nil }
        var reader = LittleEndianReader(bytes: payload)
        guard let windowStart: Int64 = reader.take(), let windowEnd: Int64 = reader.take(), let reports: UInt32 = reader.take(),
            let gaenReports: UInt32 = reader.take(), let count: UInt32 = reader.take(), let previous: Int64 = reader.take(),
            let monotonic: UInt32 = reader.take(),
            count <= maximumAggregates, Int(length) == windowSize + Int(count) * aggregateSize
        else { return nil }
        var aggregates: [ContactAggregate] = []
        aggregates.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let rpiBytes = reader.take(16), let rpi = Bytes16(rpiBytes), let aemBytes = reader.take(4),
                let aem = AssociatedEncryptedMetadata(aemBytes), let first: Int64 = reader.take(), let last: Int64 = reader.take(),
                let aggregateReports: UInt16 = reader.take(), let maximum: Int8 = reader.take(), let hasMaximum: UInt8 = reader.take(),
                let sum: Int32 = reader.take(), let valid: UInt16 = reader.take(), let aggregatePrevious: Int64 = reader.take()
            else { return nil }
            aggregates.append(
                ContactAggregate(
                    rpi: RollingProximityIdentifier(rpi), aem: aem, firstSeen: UnixTime(milliseconds: first), lastSeen: UnixTime(milliseconds: last),
                    reports: aggregateReports, rssi: RSSISummary(maximum: hasMaximum == 0 ? nil : maximum, sum: sum, validReports: valid),
                    previousScanEnd: aggregatePrevious == Int64.min ? nil : UnixTime(milliseconds: aggregatePrevious)))
        }
        let window = ScanWindowRecord(
            start: UnixTime(milliseconds: windowStart), end: UnixTime(milliseconds: windowEnd), reports: reports, exposureNotificationReports: gaenReports,
            aggregates: count, previousScanEnd: previous == Int64.min ? nil : UnixTime(milliseconds: previous), monotonicMilliseconds: monotonic)
        return Entry(window: window, aggregates: aggregates)
    }
}

private struct LittleEndianWriter {
    var bytes: [UInt8] = []

    mutating func put<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}

private struct LittleEndianReader {
    var bytes: ArraySlice<UInt8>

    mutating func take<T: FixedWidthInteger>() -> T? {
        let size = MemoryLayout<T>.size
        guard bytes.count >= size else { return nil }
        var value = T.zero
        for (index, byte) in bytes.prefix(size).enumerated() { value |= T(truncatingIfNeeded: byte) << (8 * index) }
        bytes = bytes.dropFirst(size)
        return value
    }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard bytes.count >= count else { return nil }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
