// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Testing

@Suite struct MetadataTests {
    @Test func vectorMetadataIsVersion1_0WithPlus8dBm() throws {
        let metadata = try #require(BluetoothMetadata(Hex.decode("40080000")))
        #expect(metadata.majorVersion == 1)
        #expect(metadata.minorVersion == 0)
        #expect(metadata.txPower == 8)
        #expect(metadata.calibrationConfidence == .lowest)
        #expect(metadata == .version1_0(txPower: 8))
        #expect(Hex.encode(metadata.array) == "40080000")
    }

    @Test(arguments: CalibrationConfidence.allCases)
    func version1_1CarriesConfidenceInBits3And2(confidence: CalibrationConfidence) {
        let metadata = BluetoothMetadata.version1_1(txPower: -15, calibrationConfidence: confidence)
        #expect(metadata.array == [0x50 | confidence.rawValue << 2, 0xF1, 0, 0])
        #expect(BluetoothMetadata(metadata.array) == metadata)
        #expect(BluetoothMetadata(metadata.array)?.calibrationConfidence == confidence)
    }

    @Test func version1_0IgnoresConfidenceBits() {
        // Bits 3:2 mean nothing in version 1.0; a reader reports LOWEST, as Google's does.
        let metadata = BluetoothMetadata([0x4C, 0x00, 0x00, 0x00])
        #expect(metadata?.calibrationConfidence == .lowest)
        #expect(
            BluetoothMetadata.version1_0(txPower: 0)
                == BluetoothMetadata(
                    majorVersion: 1, minorVersion: 0, calibrationConfidence: .high, txPower: 0))
    }

    @Test func txPowerIsSigned() {
        #expect(BluetoothMetadata([0x50, 0x80, 0, 0])?.txPower == -128)
        #expect(BluetoothMetadata([0x50, 0x7F, 0, 0])?.txPower == 127)
    }

    @Test func reservedBytesSurvive() {
        let bytes: [UInt8] = [0x54, 0x05, 0xAA, 0x55]
        #expect(BluetoothMetadata(bytes)?.array == bytes)
        #expect(BluetoothMetadata([1, 2, 3]) == nil)
    }
}
