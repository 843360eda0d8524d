// SPDX-License-Identifier: GPL-3.0-or-later

/// The 16-byte identifier a device broadcasts for one interval: AES-128(RPIK, PaddedData(ENIN)).
public struct RollingProximityIdentifier: Hashable, Sendable, CustomStringConvertible {
    public var bytes: Bytes16

    public init(_ bytes: Bytes16) {
        self.bytes = bytes
    }

    public var description: String { bytes.hex }

    /// The AES block that encrypts to the RPI of `interval`: "EN-RPI", six zero bytes, and the
    /// absolute interval number as a little-endian uint32.
    public static func paddedData(for interval: ENIntervalNumber) -> Bytes16 {
        var block = Bytes16.zero
        withUnsafeMutableBytes(of: &block.words) { raw in
            Self.writePaddedData(for: interval, to: raw.baseAddress!)
        }
        return block
    }

    /// Writes the padded data block of `interval` to 16 bytes at `pointer`.
    @inlinable
    public static func writePaddedData(for interval: ENIntervalNumber, to pointer: UnsafeMutableRawPointer) {
        // "EN-RPI" followed by six zeros; the last four bytes are the interval number.
        pointer.storeBytes(of: paddedDataPrefix.0, toByteOffset: 0, as: UInt64.self)
        pointer.storeBytes(of: paddedDataPrefix.1, toByteOffset: 8, as: UInt32.self)
        pointer.storeBytes(of: interval.rawValue.littleEndian, toByteOffset: 12, as: UInt32.self)
    }

    /// Bytes 0...7 and 8...11 of the padded data in memory order.
    @usableFromInline
    static let paddedDataPrefix: (UInt64, UInt32) = {
        let prefix: [UInt8] = Array("EN-RPI".utf8) + [0, 0, 0, 0, 0, 0]
        return prefix.withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        }
    }()
}

/// The 4 bytes broadcast beside the RPI: the metadata encrypted with AES-128-CTR under the AEMK,
/// with the RPI as the initial counter block.
public struct AssociatedEncryptedMetadata: Hashable, Sendable, CustomStringConvertible {
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    public init(_ bytes: (UInt8, UInt8, UInt8, UInt8)) {
        self.bytes = bytes
    }

    /// Exactly 4 bytes, or `nil`.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 4 else { return nil }
        let array = Array(bytes)
        self.bytes = (array[0], array[1], array[2], array[3])
    }

    public var array: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3] }

    public var description: String { Hex.encode(array) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.array == rhs.array }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
        hasher.combine(bytes.2)
        hasher.combine(bytes.3)
    }
}

/// The Rolling Proximity Identifier Key, derived from a TEK with HKDF (info "EN-RPIK").
public struct RollingProximityIdentifierKey: Hashable, Sendable {
    public var bytes: Bytes16
    public init(_ bytes: Bytes16) { self.bytes = bytes }
}

/// The Associated Encrypted Metadata Key, derived from a TEK with HKDF (info "EN-AEMK").
public struct AssociatedEncryptedMetadataKey: Hashable, Sendable {
    public var bytes: Bytes16
    public init(_ bytes: Bytes16) { self.bytes = bytes }
}
