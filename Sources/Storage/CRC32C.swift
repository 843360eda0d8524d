// SPDX-License-Identifier: GPL-3.0-or-later

/// CRC-32C (Castagnoli), the checksum of every record the daemon writes.
///
/// Chosen over CRC-32 (zlib) for its better error detection on short records, and because it is the
/// checksum of ext4, iSCSI and SCTP, so its behaviour on storage faults is well known.
public enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1
        }
        return value
    }

    /// The checksum of `bytes`. `checksum("123456789")` is 0xE3069283.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
