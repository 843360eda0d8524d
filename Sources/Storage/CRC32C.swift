// SPDX-License-Identifier: GPL-3.0-or-later

/// CRC-32C (Castagnoli), the checksum of every record the daemon writes.
///
/// Chosen over CRC-32 (zlib) for its better error detection on short records, and because it is the
/// checksum of ext4, iSCSI and SCTP, so its behaviour on storage faults is well known. Computed
/// "slicing by 8" (eight 256-entry tables, eight bytes a step): every record read is checked, so
/// this runs over the whole log whenever the matching index is built.
package enum CRC32C {
    /// tables[k][b]: the CRC of byte b followed by k zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 {
                value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1
            }
            tables[index] = value
        }
        for slice in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The checksum of `bytes`. `checksum("123456789")` is 0xE3069283.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            let t = table.baseAddress!
            var offset = 0
            while offset + 8 <= count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word >> 32)
                crc =
                    t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                offset += 8
            }
            while offset < count {
                crc = t[Int((crc ^ UInt32(base.load(fromByteOffset: offset, as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                offset += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    package static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
