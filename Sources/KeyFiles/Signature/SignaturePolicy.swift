// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import Foundation
import SwiftProtobuf

/// Decides whether a key file is signed by a trusted key. Nothing downloaded is used before this
/// says `verified`.
///
/// Strict (the default), in this order:
/// 1. export.sig must decode as a `TEKSignatureList`; none → `unsigned`.
/// 2. It must hold as many signatures as export.bin has signature infos (Google's rule).
/// 3. Every signature must name the algorithm by its OID, 1.2.840.10045.4.3.2, and be DER.
/// 4. A signature whose key id and version match a trusted key is verified over the whole
///    export.bin, header included; none matching → `unknown-key`.
///
/// Lenient (for testing against old samples only) skips 2, accepts algorithm names, converts raw
/// r‖s signatures to DER, and lets a signature without a key id use the only trusted key.
public struct SignaturePolicy: Sendable {
    public var trustedKeys: [VerificationKey]
    public var lenient: Bool

    public init(trustedKeys: [VerificationKey], lenient: Bool = false) {
        self.trustedKeys = trustedKeys
        self.lenient = lenient
    }

    public func verdict(exportBinary: [UInt8], exportSignature: [UInt8], export: KeyExport) -> Verdict {
        let list: PBTEKSignatureList
        do {
            list = try PBTEKSignatureList(serializedBytes: exportSignature)
        } catch {
            return .invalid("export.sig is not a TEKSignatureList (\(error))")
        }
        if list.signatures.isEmpty { return .unsigned }
        if !lenient, list.signatures.count != export.signatureInfos.count {
            return .invalid(
                "export.sig has \(list.signatures.count) signature(s) but export.bin lists \(export.signatureInfos.count) signature info(s)")
        }
        var candidates = [(signature: [UInt8], key: VerificationKey, info: SignatureInfo)]()
        var seen = [String]()
        for (position, entry) in list.signatures.enumerated() {
            let info = SignatureInfo(entry.signatureInfo)
            seen.append("'\(info.verificationKeyID)' version '\(info.verificationKeyVersion)'")
            if entry.hasBatchNum || entry.hasBatchSize {
                guard entry.batchNum >= 1, entry.batchNum <= entry.batchSize, entry.batchSize <= 1_000_000 else {
                    return .invalid("signature \(position) has batch \(entry.batchNum) of \(entry.batchSize)")
                }
            }
            var signature = [UInt8](entry.signature)
            if info.signatureAlgorithm != SignatureInfo.ecdsaP256SHA256, !lenient {
                return .invalid(
                    "signature \(position) names the algorithm '\(info.signatureAlgorithm)', not the OID \(SignatureInfo.ecdsaP256SHA256)")
            }
            switch ECDSASignatureEncoding(signature) {
            case .der:
                break
            case .rawP1363 where lenient:
                signature = Self.derFromRaw(signature)
            case .rawP1363:
                return .invalid("signature \(position) is 64 raw bytes (r‖s), not the DER encoding GAEN requires")
            case .unknown:
                return .invalid("signature \(position) (\(signature.count) bytes) is not a DER ECDSA signature")
            }
            if let key = trustedKeys.first(where: { $0.keyID == info.verificationKeyID && $0.keyVersion == info.verificationKeyVersion }) {
                candidates.append((signature, key, info))
            } else if lenient, info.verificationKeyID.isEmpty, trustedKeys.count == 1 {
                candidates.append((signature, trustedKeys[0], info))
            }
        }
        guard !candidates.isEmpty else {
            let trusted = trustedKeys.map { "'\($0.keyID)' version '\($0.keyVersion)'" }
            return .unknownKey(
                "signed by \(seen.joined(separator: ", ")); trusted: \(trusted.isEmpty ? "none" : trusted.joined(separator: ", "))")
        }
        for candidate in candidates {
            let valid = exportBinary.withUnsafeBytes { candidate.key.publicKey.verify(signature: candidate.signature, message: $0) }
            if valid { return .verified(keyID: candidate.key.keyID, keyVersion: candidate.key.keyVersion) }
        }
        return .badSignature("the signature by key '\(candidates[0].key.keyID)' version '\(candidates[0].key.keyVersion)' does not verify over export.bin")
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` of a 64-byte r ‖ s.
    static func derFromRaw(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}
