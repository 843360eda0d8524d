// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Storage

/// The on-disk form of the TEK history: `<data-dir>/tek-history`, replaced atomically on each change.
///
/// Layout (little-endian), documented in docs/key-schedule.md:
/// - header, 16 bytes: magic `GAENTEKH`, format version (u16, 1), record count (u16),
///   CRC-32C of the first 12 bytes (u32);
/// - records, 32 bytes each: key data (16), rolling start interval number (u32), rolling period
///   (u16), flags (u16; bit 0 = shortened by release), creation time in Unix seconds (u32),
///   CRC-32C of the first 28 bytes (u32).
///
/// A damaged record is skipped and counted, so one flipped bit costs one key, not the history.
/// A damaged header makes the whole file unreadable: then nothing is trusted and nothing is overwritten.
package enum KeyHistoryFile {
    package static let name = "tek-history"
    static let magic: [UInt8] = Array("GAENTEKH".utf8)
    static let version: UInt16 = 1
    static let headerSize = 16
    static let recordSize = 32
    /// At most a few keys a day for 14 days are kept; anything near this is not a key history.
    static let maximumRecords = 4096
    static let maximumSize = headerSize + maximumRecords * recordSize

    /// What a read found.
    package struct Contents: Sendable {
        package var keys: [HistoryKey]
        /// Zero-based indices of records whose checksum or fields were wrong, and so were skipped.
        package var damagedRecords: [Int]

        package init(keys: [HistoryKey], damagedRecords: [Int]) {
            self.keys = keys
            self.damagedRecords = damagedRecords
        }
    }

    /// Reads the history at `path`; `nil` if there is no file. Changes nothing.
    package static func read(_ path: String) throws(KeyHistoryError) -> Contents? {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: maximumSize)
        } catch  where error.isTooLarge {
            // The writer never writes more than this: a larger file is not one of ours.
            throw .unreadable(path: path, reason: "\(error)")
        } catch {
            throw .storage(error)
        }
        guard let bytes else { return nil }
        return try decode(bytes, path: path)
    }

    static func decode(_ bytes: [UInt8], path: String) throws(KeyHistoryError) -> Contents {
        guard bytes.count >= headerSize else {
            throw .unreadable(path: path, reason: "\(bytes.count) bytes, shorter than the \(headerSize)-byte header")
        }
        guard Array(bytes[0..<8]) == magic else {
            throw .unreadable(path: path, reason: "it does not start with the magic GAENTEKH")
        }
        guard CRC32C.checksum(bytes[0..<12]) == bytes.loadLE32(at: 12) else {
            throw .unreadable(path: path, reason: "the header checksum does not match")
        }
        let version = bytes.loadLE16(at: 8)
        guard version == Self.version else { throw .unsupportedVersion(path: path, version: version) }
        let count = Int(bytes.loadLE16(at: 10))
        var keys = [HistoryKey]()
        var damaged = [Int]()
        for index in 0..<count {
            let offset = headerSize + index * recordSize
            guard offset + recordSize <= bytes.count else {
                damaged.append(index)
                continue
            }
            let record = bytes[offset..<(offset + recordSize)]
            guard CRC32C.checksum(record.prefix(28)) == bytes.loadLE32(at: offset + 28),
                let key = try? TemporaryExposureKey(
                    keyData: Bytes16(record.prefix(16))!,
                    rollingStartIntervalNumber: ENIntervalNumber(rawValue: bytes.loadLE32(at: offset + 16)),
                    rollingPeriod: UInt32(bytes.loadLE16(at: offset + 20)))
            else {
                damaged.append(index)
                continue
            }
            let flags = bytes.loadLE16(at: offset + 22)
            keys.append(
                HistoryKey(
                    key: key, created: UnixTime(seconds: Int64(bytes.loadLE32(at: offset + 24))),
                    shortenedByRelease: flags & 1 != 0))
        }
        // Bytes past the last record mean the count and the length disagree: some record is missing.
        if bytes.count > headerSize + count * recordSize {
            damaged.append(count)
        }
        return Contents(keys: keys, damagedRecords: damaged)
    }

    package static func encode(_ keys: [HistoryKey]) -> [UInt8] {
        precondition(keys.count <= maximumRecords, "key history of \(keys.count) records")
        var bytes = magic
        bytes.appendLE16(version)
        bytes.appendLE16(UInt16(keys.count))
        bytes.appendLE32(CRC32C.checksum(bytes))
        for entry in keys {
            let start = bytes.count
            bytes += entry.key.keyData.bytes
            bytes.appendLE32(entry.key.rollingStartIntervalNumber.rawValue)
            bytes.appendLE16(UInt16(entry.key.rollingPeriod))
            bytes.appendLE16(entry.shortenedByRelease ? 1 : 0)
            bytes.appendLE32(UInt32(clamping: max(0, entry.created.seconds)))
            bytes.appendLE32(CRC32C.checksum(bytes[start...]))
        }
        return bytes
    }
}

extension [UInt8] {
    func loadLE16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    func loadLE32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16
            | UInt32(self[offset + 3]) << 24
    }

    mutating func appendLE16(_ value: UInt16) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8))
    }

    mutating func appendLE32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
