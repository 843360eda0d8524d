// SPDX-License-Identifier: GPL-3.0-or-later

/// A 48-bit Bluetooth device address, written most significant byte first (`3A:5B:7C:9D:1E:2F`).
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// Most significant byte first.
    public var bytes: [UInt8]

    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// From its text form, `3A:5B:7C:9D:1E:2F` (as BlueZ writes it).
    public init?(string: String) {
        let parts = string.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes = [UInt8]()
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// From the 6 bytes as they travel in HCI packets, least significant first.
    public init(littleEndian bytes: ArraySlice<UInt8>) {
        precondition(bytes.count == 6)
        self.bytes = bytes.reversed()
    }

    public var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// A non-resolvable private address from 6 random bytes: the two most significant bits are 00.
    public static func nonResolvablePrivate(random: [UInt8]) -> BluetoothAddress {
        precondition(random.count == 6)
        var bytes = random
        bytes[0] &= 0x3F
        // All-zero and all-one random parts are not allowed; flip a bit if they come up.
        if bytes[0] == 0, bytes[1...].allSatisfy({ $0 == 0 }) { bytes[5] = 1 }
        if bytes[0] == 0x3F, bytes[1...].allSatisfy({ $0 == 0xFF }) { bytes[5] = 0xFE }
        return BluetoothAddress(bytes)!
    }

    public var description: String {
        bytes.map {
            let d = String($0, radix: 16, uppercase: true); return d.count == 1 ? "0" + d : d
        }.joined(separator: ":")
    }
}
