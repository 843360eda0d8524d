// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// The GAEN cryptography of one device or one matching task: RPIK and AEMK from a TEK, the RPIs of a
/// key's intervals, and the AEM of a metadata value (Cryptography Specification v1.2).
///
/// It owns two libcrypto contexts and a scratch block buffer, so it is not `Sendable`: each task
/// that derives makes its own. Nothing in the RPI path allocates per key or per block.
package final class ExposureKeyCrypto {
    private let hkdf = ZeroSaltHKDF()
    private let ecb: AESContext
    private let ctr: AESContext
    /// Padded-data blocks of 144 intervals for up to 16 rolling starts, kept by day number modulo 16:
    /// the keys of a file cover 14 days in random order, so each day's blocks are written once and
    /// reused, never rebuilt per key.
    private var paddedData: UnsafeMutableRawBufferPointer
    private var paddedDataStarts = [UInt32](repeating: UInt32.max, count: ExposureKeyCrypto.paddedDataSlots)
    private static let paddedDataSlots = 16

    /// The most RPIs one call derives: a day's worth.
    package static let maximumBatch = Int(ENIntervalNumber.perDay)

    package init() throws(CryptoError) {
        // The batch call writes RPIs straight into the caller's buffer as 16-byte blocks.
        precondition(MemoryLayout<RollingProximityIdentifier>.stride == 16, "RPIs must be 16 contiguous bytes")
        ecb = try AESContext(.ecb)
        ctr = try AESContext(.ctr)
        paddedData = .allocate(byteCount: Self.paddedDataSlots * Self.maximumBatch * 16, alignment: 64)
        // Every block starts with the same 12 bytes; only the interval numbers change later.
        for index in 0..<(Self.paddedDataSlots * Self.maximumBatch) {
            RollingProximityIdentifier.writePaddedData(for: ENIntervalNumber(rawValue: 0), to: paddedData.baseAddress! + index * 16)
        }
    }

    deinit {
        paddedData.deallocate()
    }

    /// The Rolling Proximity Identifier Key: HKDF-SHA256(TEK, NULL, "EN-RPIK", 16).
    package func rpik(for tek: Bytes16) -> RollingProximityIdentifierKey {
        RollingProximityIdentifierKey(hkdf.expand16(hkdf.extract(tek), info: .rpik))
    }

    /// The Associated Encrypted Metadata Key: HKDF-SHA256(TEK, NULL, "EN-AEMK", 16).
    package func aemk(for tek: Bytes16) -> AssociatedEncryptedMetadataKey {
        AssociatedEncryptedMetadataKey(hkdf.expand16(hkdf.extract(tek), info: .aemk))
    }

    /// Both keys, sharing one HKDF-Extract.
    package func keys(for tek: Bytes16) -> (rpik: RollingProximityIdentifierKey, aemk: AssociatedEncryptedMetadataKey) {
        let prk = hkdf.extract(tek)
        return (
            RollingProximityIdentifierKey(hkdf.expand16(prk, info: .rpik)),
            AssociatedEncryptedMetadataKey(hkdf.expand16(prk, info: .aemk))
        )
    }

    /// Writes the RPIs of `count` consecutive intervals from `start` to `output`, encrypting all the
    /// padded-data blocks with one AES-128-ECB call. `count` is 1...144.
    package func rpis(
        rpik: RollingProximityIdentifierKey, startingAt start: ENIntervalNumber, count: Int,
        into output: UnsafeMutablePointer<RollingProximityIdentifier>
    ) {
        precondition((1...Self.maximumBatch).contains(count), "RPI batch of \(count) outside 1...\(Self.maximumBatch)")
        let blocks = paddedDataBlocks(start: start)
        withUnsafeBytes(of: rpik.bytes.words) { key in
            // RollingProximityIdentifier is a struct of one Bytes16: 16 contiguous bytes each.
            ecb.encrypt(key: key.baseAddress!, iv: nil, input: blocks, output: UnsafeMutableRawPointer(output), count: count * 16)
        }
    }

    /// The RPIs of `count` consecutive intervals from `start` for a TEK.
    package func rpis(tek: Bytes16, startingAt start: ENIntervalNumber, count: Int) -> [RollingProximityIdentifier] {
        let rpik = rpik(for: tek)
        return [RollingProximityIdentifier](unsafeUninitializedCapacity: count) { buffer, initialized in
            rpis(rpik: rpik, startingAt: start, count: count, into: buffer.baseAddress!)
            initialized = count
        }
    }

    /// The RPI of one interval.
    package func rpi(rpik: RollingProximityIdentifierKey, interval: ENIntervalNumber) -> RollingProximityIdentifier {
        var rpi = RollingProximityIdentifier(.zero)
        rpis(rpik: rpik, startingAt: interval, count: 1, into: &rpi)
        return rpi
    }

    /// Encrypts metadata into the AEM that travels with `rpi`: AES-128-CTR under the AEMK with the
    /// RPI as the initial counter block. Decryption is the same operation: see `metadata(from:)`.
    package func aem(
        for metadata: BluetoothMetadata, aemk: AssociatedEncryptedMetadataKey, rpi: RollingProximityIdentifier
    ) -> AssociatedEncryptedMetadata {
        AssociatedEncryptedMetadata(applyKeystream(to: metadata.bytes, aemk: aemk, rpi: rpi))
    }

    /// Decrypts an AEM heard with `rpi`.
    package func metadata(
        from aem: AssociatedEncryptedMetadata, aemk: AssociatedEncryptedMetadataKey, rpi: RollingProximityIdentifier
    ) -> BluetoothMetadata {
        BluetoothMetadata(bytes: applyKeystream(to: aem.bytes, aemk: aemk, rpi: rpi))
    }

    private func applyKeystream(
        to input: (UInt8, UInt8, UInt8, UInt8), aemk: AssociatedEncryptedMetadataKey, rpi: RollingProximityIdentifier
    ) -> (UInt8, UInt8, UInt8, UInt8) {
        var input = input
        var output: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        withUnsafeBytes(of: aemk.bytes.words) { key in
            withUnsafeBytes(of: rpi.bytes.words) { iv in
                withUnsafeBytes(of: &input) { plain in
                    withUnsafeMutableBytes(of: &output) { cipher in
                        ctr.encrypt(
                            key: key.baseAddress!, iv: iv.baseAddress!, input: plain.baseAddress!,
                            output: cipher.baseAddress!, count: 4)
                    }
                }
            }
        }
        return output
    }

    /// The 144 padded-data blocks from `start`, from the slot of its day; a slot holding another start
    /// gets its interval numbers rewritten (the constant prefixes were written at init).
    private func paddedDataBlocks(start: ENIntervalNumber) -> UnsafeRawPointer {
        let slot = Int((start.rawValue / ENIntervalNumber.perDay) % UInt32(Self.paddedDataSlots))
        let base = paddedData.baseAddress! + slot * Self.maximumBatch * 16
        if paddedDataStarts[slot] != start.rawValue {
            var interval = start.rawValue
            for index in 0..<Self.maximumBatch {
                base.storeBytes(of: interval.littleEndian, toByteOffset: index * 16 + 12, as: UInt32.self)
                interval &+= 1
            }
            paddedDataStarts[slot] = start.rawValue
        }
        return UnsafeRawPointer(base)
    }
}
