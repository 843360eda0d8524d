// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
package import ENCrypto
import Foundation
import SwiftProtobuf
import ZIPFoundation

/// Writes signed key files laid out as the reference server writes them: header, the export's batch
/// fields (batch 1 of 1 by `KeyExport`'s defaults), one signature info per signer, keys sorted by
/// their bytes, the proto2 default for a 144 rolling period left out, export.bin then export.sig in
/// a deflated zip.
package struct KeyFileWriter: Sendable {
    package var signingKey: ECDSAPrivateKey
    /// What the signature names; an empty key id is left out of the file (a signature without
    /// verification_key_id), and the algorithm OID chooses the digest (SHA-512 for
    /// `SignatureInfo.ecdsaP256SHA512`, else SHA-256).
    package var signatureInfo: SignatureInfo

    package init(signingKey: ECDSAPrivateKey, keyID: String, keyVersion: String) {
        self.signingKey = signingKey
        signatureInfo = SignatureInfo(verificationKeyID: keyID, verificationKeyVersion: keyVersion)
    }

    /// The export.bin of `export` (its signature infos are replaced by this writer's).
    package func exportBinary(_ export: KeyExport) -> [UInt8] {
        Self.exportBinary(export, signatureInfos: [signatureInfo])
    }

    /// The export.sig for an export.bin, and the batch it belongs to.
    package func exportSignature(for exportBinary: [UInt8], batch: KeyExport = KeyExport()) throws(CryptoError) -> [UInt8] {
        try Self.exportSignature(for: exportBinary, batch: batch, signers: [self])
    }

    /// A complete signed archive.
    package func archive(_ export: KeyExport) throws(CryptoError) -> [UInt8] {
        try Self.archive(export, signers: [self])
    }

    /// A complete archive signed by each of `signers` (cosigning, as the reference server does with
    /// several signing keys): export.bin lists their signature infos and export.sig their
    /// signatures, in the same order.
    package static func archive(_ export: KeyExport, signers: [KeyFileWriter]) throws(CryptoError) -> [UInt8] {
        let binary = exportBinary(export, signatureInfos: signers.map(\.signatureInfo))
        let signature = try exportSignature(for: binary, batch: export, signers: signers)
        return zip([(KeyFileArchive.binaryName, binary), (KeyFileArchive.signatureName, signature)])
    }

    static func exportBinary(_ export: KeyExport, signatureInfos: [SignatureInfo]) -> [UInt8] {
        var message = PBTemporaryExposureKeyExport()
        message.startTimestamp = export.startTimestamp
        message.endTimestamp = export.endTimestamp
        message.region = export.region
        if export.hasBatchNumber { message.batchNum = export.batchNumber }
        if export.hasBatchSize { message.batchSize = export.batchSize }
        message.signatureInfos = signatureInfos.map(\.message)
        // Sorted by key bytes, as the reference server does "to scramble keys": the order in which
        // keys were uploaded must not show.
        message.keys = export.keys.sorted(by: fileOrder).map(Self.message)
        message.revisedKeys = export.revisedKeys.sorted(by: fileOrder).map(Self.message)
        // Serializing a message built from valid fields cannot fail.
        let body: [UInt8] = try! message.serializedBytes()
        return ExportBinary.header + body
    }

    static func exportSignature(for exportBinary: [UInt8], batch: KeyExport, signers: [KeyFileWriter]) throws(CryptoError) -> [UInt8] {
        try exportSignature(batch: batch, signers: signers) { signer, digest throws(CryptoError) in
            try exportBinary.withUnsafeBytes { raw in
                Result { () throws(CryptoError) in try signer.signingKey.sign(raw, digest: digest) }
            }.get()
        }
    }

    /// export.sig from export.bin's digest (`hash`, of the `digest` every signer's algorithm asks).
    static func exportSignature(hash: [UInt8], digest: ECDSADigest, batch: KeyExport, signers: [KeyFileWriter]) throws(CryptoError) -> [UInt8] {
        try exportSignature(batch: batch, signers: signers) { signer, _ throws(CryptoError) in try signer.signingKey.sign(hash: hash, digest: digest) }
    }

    private static func exportSignature(
        batch: KeyExport, signers: [KeyFileWriter], sign: (KeyFileWriter, ECDSADigest) throws(CryptoError) -> [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        var list = PBTEKSignatureList()
        for signer in signers {
            var signature = PBTEKSignature()
            signature.signatureInfo = signer.signatureInfo.message
            if batch.hasBatchNumber { signature.batchNum = batch.batchNumber }
            if batch.hasBatchSize { signature.batchSize = batch.batchSize }
            let digest: ECDSADigest = signer.signatureInfo.signatureAlgorithm == SignatureInfo.ecdsaP256SHA512 ? .sha512 : .sha256
            signature.signature = Data(try sign(signer, digest))
            list.signatures.append(signature)
        }
        return try! list.serializedBytes()
    }

    /// A deflated zip of the entries, in order. Used for key files and, in tests, for hostile ones.
    package static func zip(_ entries: [(name: String, bytes: [UInt8])]) -> [UInt8] {
        // An in-memory archive of in-memory entries has no failure mode but a broken library.
        let archive = try! Archive(data: Data(), accessMode: .create)
        for (name, bytes) in entries {
            try! archive.addEntry(
                with: name, type: .file, uncompressedSize: Int64(bytes.count), compressionMethod: .deflate,
                provider: { position, size in Data(bytes[Int(position)..<(Int(position) + size)]) })
        }
        return [UInt8](archive.data!)
    }

    /// The order of keys in a file: by their bytes, as the reference server sorts them "to
    /// scramble keys".
    package static func fileOrder(_ a: DiagnosisKey, _ b: DiagnosisKey) -> Bool {
        // The bytes' order without an array each: the words hold the bytes in memory order, so
        // read as big-endian numbers they compare as the bytes do.
        let (left, right) = (a.key.keyData.words, b.key.keyData.words)
        if left.0 != right.0 { return UInt64(bigEndian: left.0) < UInt64(bigEndian: right.0) }
        return UInt64(bigEndian: left.1) < UInt64(bigEndian: right.1)
    }

    static func message(_ key: DiagnosisKey) -> PBTemporaryExposureKey {
        var message = PBTemporaryExposureKey()
        message.keyData = Data(key.key.keyData.bytes)
        message.transmissionRiskLevel = key.transmissionRiskLevel
        message.rollingStartIntervalNumber = Int32(bitPattern: key.key.rollingStartIntervalNumber.rawValue)
        if key.key.rollingPeriod != 144 { message.rollingPeriod = Int32(key.key.rollingPeriod) }
        if key.reportType != .unknown {
            message.reportType = PBTemporaryExposureKey.ReportType(rawValue: Int(key.reportType.rawValue)) ?? .unknown
        }
        if let days = key.daysSinceOnsetOfSymptoms { message.daysSinceOnsetOfSymptoms = days }
        return message
    }
}
