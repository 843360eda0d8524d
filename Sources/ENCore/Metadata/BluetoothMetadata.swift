// SPDX-License-Identifier: GPL-3.0-or-later

/// How much the receiver may trust the TX power in the metadata. The corresponding C type is
/// `ENCalibrationConfidence`; the values are the ones on the air (bits 3:2 of metadata byte 0).
public enum CalibrationConfidence: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    /// No calibration data: what a Linux device without a calibration entry advertises.
    case lowest = 0
    case low = 1
    case medium = 2
    case high = 3

    public var description: String {
        switch self {
        case .lowest: return "lowest"
        case .low: return "low"
        case .medium: return "medium"
        case .high: return "high"
        }
    }
}

/// The 4 bytes of metadata that travel encrypted in the AEM.
///
/// Byte 0 holds the version (bits 7:6 major, bits 5:4 minor) and, from version 1.1 on, the
/// calibration confidence (bits 3:2); byte 1 is the TX power as a signed dBm value; bytes 2 and 3 are
/// reserved and zero. Decoding is total: every 4-byte value has a reading, so a peer cannot make it fail.
public struct BluetoothMetadata: Hashable, Sendable, CustomStringConvertible {
    public var majorVersion: UInt8
    public var minorVersion: UInt8
    /// `.lowest` unless the version is 1.1 or later, as Google's reader does.
    public var calibrationConfidence: CalibrationConfidence
    /// Measured radiated transmit power in dBm.
    public var txPower: Int8
    /// Bytes 2 and 3, kept so that an unknown future use survives a round trip.
    public var reserved: (UInt8, UInt8)

    /// Metadata version 1.1 with a calibration confidence: what gaend advertises.
    public static func version1_1(txPower: Int8, calibrationConfidence: CalibrationConfidence) -> BluetoothMetadata {
        BluetoothMetadata(majorVersion: 1, minorVersion: 1, calibrationConfidence: calibrationConfidence, txPower: txPower)
    }

    /// Metadata version 1.0, which has no calibration confidence.
    public static func version1_0(txPower: Int8) -> BluetoothMetadata {
        BluetoothMetadata(majorVersion: 1, minorVersion: 0, calibrationConfidence: .lowest, txPower: txPower)
    }

    public init(
        majorVersion: UInt8, minorVersion: UInt8, calibrationConfidence: CalibrationConfidence, txPower: Int8,
        reserved: (UInt8, UInt8) = (0, 0)
    ) {
        self.majorVersion = majorVersion & 0x03
        self.minorVersion = minorVersion & 0x03
        // Version 1.0 has no confidence bits; keep the value what a reader would see.
        let carriesConfidence = self.majorVersion > 1 || (self.majorVersion == 1 && self.minorVersion >= 1)
        self.calibrationConfidence = carriesConfidence ? calibrationConfidence : .lowest
        self.txPower = txPower
        self.reserved = reserved
    }

    /// Reads 4 bytes of decrypted metadata.
    public init(bytes: (UInt8, UInt8, UInt8, UInt8)) {
        majorVersion = bytes.0 >> 6
        minorVersion = (bytes.0 >> 4) & 0x03
        let carriesConfidence = majorVersion > 1 || (majorVersion == 1 && minorVersion >= 1)
        calibrationConfidence = carriesConfidence ? CalibrationConfidence(rawValue: (bytes.0 >> 2) & 0x03)! : .lowest
        txPower = Int8(bitPattern: bytes.1)
        reserved = (bytes.2, bytes.3)
    }

    /// Exactly 4 bytes, or `nil`.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 4 else { return nil }
        let array = Array(bytes)
        self.init(bytes: (array[0], array[1], array[2], array[3]))
    }

    /// The 4 plaintext bytes.
    public var bytes: (UInt8, UInt8, UInt8, UInt8) {
        var version = majorVersion << 6 | minorVersion << 4
        if majorVersion > 1 || (majorVersion == 1 && minorVersion >= 1) {
            version |= calibrationConfidence.rawValue << 2
        }
        return (version, UInt8(bitPattern: txPower), reserved.0, reserved.1)
    }

    public var array: [UInt8] {
        let b = bytes
        return [b.0, b.1, b.2, b.3]
    }

    public var description: String {
        "version \(majorVersion).\(minorVersion), TX power \(txPower) dBm, calibration confidence \(calibrationConfidence)"
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.array == rhs.array }
    public func hash(into hasher: inout Hasher) { hasher.combine(array) }
}
