// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Testing

/// The official vectors, in full: RPIK, AEMK, all 144 RPIs and AEMs, and the metadata decrypted back.
@Suite struct VectorTests {
    let vectors: Vectors
    let crypto: ExposureKeyCrypto
    let tek: Bytes16

    init() throws {
        vectors = try Vectors.load()
        crypto = try ExposureKeyCrypto()
        tek = try Bytes16(hex: vectors.tek)
    }

    @Test func derivedKeys() {
        #expect(crypto.rpik(for: tek).bytes.hex == vectors.rpik)
        #expect(crypto.aemk(for: tek).bytes.hex == vectors.aemk)
        let both = crypto.keys(for: tek)
        #expect(both.rpik.bytes.hex == vectors.rpik)
        #expect(both.aemk.bytes.hex == vectors.aemk)
    }

    @Test func allRPIsInOneBatch() throws {
        #expect(vectors.intervals.count == 144)
        let start = ENIntervalNumber(rawValue: vectors.intervals[0].en_interval_number)
        let rpis = crypto.rpis(tek: tek, startingAt: start, count: 144)
        for (interval, rpi) in zip(vectors.intervals, rpis) {
            #expect(interval.en_interval_number == start.rawValue + UInt32(interval.index))
            #expect(RollingProximityIdentifier.paddedData(for: ENIntervalNumber(rawValue: interval.en_interval_number)).hex == interval.padded_data)
            #expect(rpi.bytes.hex == interval.rpi, "RPI \(interval.index)")
        }
    }

    @Test func allAEMsAndTheirMetadata() throws {
        let aemk = crypto.aemk(for: tek)
        let metadata = try #require(BluetoothMetadata(Hex.decode(vectors.metadata.plaintext)))
        for interval in vectors.intervals {
            let rpi = RollingProximityIdentifier(try Bytes16(hex: interval.rpi))
            let aem = crypto.aem(for: metadata, aemk: aemk, rpi: rpi)
            #expect(aem.description == interval.aem, "AEM \(interval.index)")
            let decrypted = crypto.metadata(from: aem, aemk: aemk, rpi: rpi)
            #expect(Hex.encode(decrypted.array) == vectors.metadata.plaintext)
            #expect(decrypted.txPower == 8)
        }
    }

    @Test func relativeIntervalNumberGivesAnotherRPI() throws {
        // The classic mistake: ENIN counted from the key's start. The vector file records what it gives.
        let rpik = crypto.rpik(for: tek)
        let relative = crypto.rpi(rpik: rpik, interval: ENIntervalNumber(rawValue: 0))
        let absolute = crypto.rpi(rpik: rpik, interval: ENIntervalNumber(rawValue: vectors.intervals[0].en_interval_number))
        #expect(absolute.bytes.hex == vectors.intervals[0].rpi)
        #expect(relative != absolute)
        #expect(vectors.verification.negative_check.contains(relative.bytes.hex))
    }
}
