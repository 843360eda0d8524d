// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Testing

@Suite struct DerivationTests {
    @Test func fastHKDFEqualsLibcryptoHKDF() throws {
        // The midstate construction against libcrypto's own HKDF, on many keys and both infos.
        let crypto = try ExposureKeyCrypto()
        let random = SystemRandom()
        for _ in 0..<500 {
            let tek = try random.bytes16()
            let rpik = try HKDF.sha256(inputKeyMaterial: tek.bytes, info: Array("EN-RPIK".utf8), length: 16)
            let aemk = try HKDF.sha256(inputKeyMaterial: tek.bytes, info: Array("EN-AEMK".utf8), length: 16)
            #expect(crypto.rpik(for: tek).bytes.bytes == rpik)
            #expect(crypto.aemk(for: tek).bytes.bytes == aemk)
        }
    }

    @Test func nullSaltIsThirtyTwoZeroBytes() throws {
        let tek = try Bytes16(hex: "75c734c6dd1a782de7a965da5eb93125")
        let withZeros = try HKDF.sha256(
            inputKeyMaterial: tek.bytes, salt: [UInt8](repeating: 0, count: 32), info: Array("EN-RPIK".utf8), length: 16)
        #expect(Hex.encode(withZeros) == "185ad91db69ec7dd048960f1f3ba6175")
        // A salt that is not zero changes everything: the test above is not vacuous.
        let other = try HKDF.sha256(inputKeyMaterial: tek.bytes, salt: [1], info: Array("EN-RPIK".utf8), length: 16)
        #expect(Hex.encode(other) != "185ad91db69ec7dd048960f1f3ba6175")
    }

    @Test func batchesEqualSingleDerivationsWhateverTheOrder() throws {
        // The padded-data cache must not leak one range into another.
        let crypto = try ExposureKeyCrypto()
        let reference = try ExposureKeyCrypto()
        let tek = try SystemRandom().bytes16()
        let rpik = crypto.rpik(for: tek)
        let day = ENIntervalNumber(rawValue: 2_642_976)
        let requests: [(ENIntervalNumber, Int)] = [
            (day, 144), (day.advanced(by: 144), 10), (day, 5), (day.advanced(by: 3), 144), (day, 1), (day, 144),
        ]
        for (start, count) in requests {
            let batch = crypto.rpis(tek: tek, startingAt: start, count: count)
            for offset in 0..<count {
                #expect(batch[offset] == reference.rpi(rpik: rpik, interval: start.advanced(by: offset)))
            }
        }
    }

    @Test func aemRoundTripsVersion1_1Metadata() throws {
        let crypto = try ExposureKeyCrypto()
        let keys = crypto.keys(for: try SystemRandom().bytes16())
        let rpi = crypto.rpi(rpik: keys.rpik, interval: ENIntervalNumber(rawValue: 2_900_000))
        let metadata = BluetoothMetadata.version1_1(txPower: -21, calibrationConfidence: .medium)
        let aem = crypto.aem(for: metadata, aemk: keys.aemk, rpi: rpi)
        #expect(aem.array != metadata.array)
        #expect(crypto.metadata(from: aem, aemk: keys.aemk, rpi: rpi) == metadata)
        // The wrong RPI (the IV) gives other bytes.
        let otherRPI = crypto.rpi(rpik: keys.rpik, interval: ENIntervalNumber(rawValue: 2_900_001))
        #expect(crypto.metadata(from: aem, aemk: keys.aemk, rpi: otherRPI) != metadata)
    }

    @Test func systemRandomGivesFreshKeys() throws {
        let random = SystemRandom()
        let keys = try (0..<64).map { _ in try random.bytes16() }
        #expect(Set(keys).count == 64)
    }
}
