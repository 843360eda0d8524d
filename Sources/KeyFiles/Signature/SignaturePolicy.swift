// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import Foundation
import SwiftProtobuf

/// Decides whether a key file is signed by a trusted key. Nothing downloaded is used before this
/// says `verified`.
///
/// Strict (the default) follows Google's verifier (`SignatureVerifier.verify` in
/// exposure-notifications-internals, with `ignoreUnmatchedSignatures` on), each trusted key being
/// a key set of its own (any one of them verifying is enough), in this order:
/// 1. export.sig must decode as a `TEKSignatureList`; none → `unsigned`.
/// 2. Signatures are matched to trusted keys (`SignatureMatch`): one naming no trusted key is
///    skipped unjudged; one naming a trusted key must name a known algorithm OID and be DER.
///    None matched → `unknown-key`; a key all of whose signatures verify over the whole export.bin,
///    header included → `verified`, else `bad-signature`.
/// 3. Then, as Google after the signature: export.bin's batch fields (`KeyExport.batchProblem`),
///    and as many signatures as export.bin has signature infos.
///
/// Lenient (for testing against old samples only) skips the count, accepts algorithm names,
/// converts raw r‖s signatures to DER, and lets signatures without a key id stand together.
package struct SignaturePolicy: Sendable {
    package var trustedKeys: [VerificationKey]
    package var lenient: Bool

    package init(trustedKeys: [VerificationKey], lenient: Bool = false) {
        self.trustedKeys = trustedKeys
        self.lenient = lenient
    }

    package func verdict(exportBinary: [UInt8], exportSignature: [UInt8], export: KeyExport) -> Verdict {
        let list: PBTEKSignatureList
        do {
            list = try PBTEKSignatureList(serializedBytes: exportSignature)
        } catch {
            return .invalid("export.sig is not a TEKSignatureList (\(error))")
        }
        if list.signatures.isEmpty { return .unsigned }
        let signed = signatureVerdict(list.signatures, exportBinary: exportBinary)
        guard signed.isVerified else { return signed }
        if let problem = export.batchProblem { return .invalid(problem) }
        if !lenient, list.signatures.count != export.signatureInfos.count {
            return .invalid(
                "export.sig has \(list.signatures.count) signature(s) but export.bin lists \(export.signatureInfos.count) signature info(s)")
        }
        return signed
    }

    /// The verdict of the signatures alone.
    private func signatureVerdict(_ signatures: [PBTEKSignature], exportBinary: [UInt8]) -> Verdict {
        let match: SignatureMatch
        switch SignatureMatch.make(signatures, trustedKeys: trustedKeys, lenient: lenient) {
        case .success(let made): match = made
        case .failure(let problem): return .invalid(problem.reason)
        }
        guard !match.byKey.isEmpty else {
            let seen = signatures.map { "'\($0.signatureInfo.verificationKeyID)' version '\($0.signatureInfo.verificationKeyVersion)'" }
            let trusted = trustedKeys.map { "'\($0.keyID)' version '\($0.keyVersion)'" }
            return .unknownKey(
                "signed by \(seen.joined(separator: ", ")); trusted: \(trusted.isEmpty ? "none" : trusted.joined(separator: ", "))")
        }
        for (key, matched) in match.byKey {
            // Every signature naming the key must verify, as every signature of a Google key set.
            let valid = exportBinary.withUnsafeBytes { message in
                matched.allSatisfy { key.publicKey.verify(signature: $0.signature, message: message, digest: $0.digest) }
            }
            if valid { return .verified(keyID: key.keyID, keyVersion: key.keyVersion) }
        }
        let first = match.byKey[0].key
        return .badSignature("the signature by key '\(first.keyID)' version '\(first.keyVersion)' does not verify over export.bin")
    }
}
