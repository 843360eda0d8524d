// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import Foundation

/// Which signatures of export.sig each trusted key has to verify, as Google's
/// `createCosignatureVerifications` (SignatureVerifier.java) builds them with
/// `ignoreUnmatchedSignatures` on, every trusted key being a one-key set:
///
/// - a signature without `verification_key_id` is checked with every trusted key (each set has
///   one key), but only when it is the file's only signature: among several it makes the file
///   invalid (strict; presence of the field decides, as in Google's `hasVerificationKeyId`);
/// - a signature naming a key id and version no trusted key has is skipped, its algorithm and
///   encoding unjudged;
/// - a signature naming a trusted key must name an algorithm OID Google accepts (ECDSA with
///   SHA-256 or SHA-512) and, strict, be DER.
struct SignatureMatch {
    struct Signature {
        var signature: [UInt8]
        var digest: ECDSADigest
    }

    struct Problem: Error {
        var reason: String
    }

    /// Trusted keys that some signature names, in the order they are trusted, each with its signatures.
    var byKey: [(key: VerificationKey, signatures: [Signature])] = []

    /// Google's `OID_TO_NAME_MAP`.
    static let digests = [SignatureInfo.ecdsaP256SHA256: ECDSADigest.sha256, SignatureInfo.ecdsaP256SHA512: .sha512]

    static func make(_ signatures: [PBTEKSignature], trustedKeys: [VerificationKey], lenient: Bool) -> Result<SignatureMatch, Problem> {
        var matched = [[Signature]](repeating: [], count: trustedKeys.count)
        for (position, entry) in signatures.enumerated() {
            let info = entry.signatureInfo
            let keyless = lenient ? info.verificationKeyID.isEmpty : !info.hasVerificationKeyID
            if keyless, signatures.count > 1, !lenient {
                return .failure(Problem(reason: "signature \(position) in a cosigning group of \(signatures.count) does not specify verification_key_id"))
            }
            let keys = trustedKeys.indices.filter {
                keyless || (trustedKeys[$0].keyID == info.verificationKeyID && trustedKeys[$0].keyVersion == info.verificationKeyVersion)
            }
            if keys.isEmpty { continue }
            let signature: Signature
            switch judge(entry, position: position, lenient: lenient) {
            case .success(let judged): signature = judged
            case .failure(let problem): return .failure(problem)
            }
            for key in keys { matched[key].append(signature) }
        }
        var match = SignatureMatch()
        for (index, signatures) in matched.enumerated() where !signatures.isEmpty {
            match.byKey.append((trustedKeys[index], signatures))
        }
        return .success(match)
    }

    /// The algorithm and encoding of a signature that names a trusted key.
    private static func judge(_ entry: PBTEKSignature, position: Int, lenient: Bool) -> Result<Signature, Problem> {
        let algorithm = entry.signatureInfo.signatureAlgorithm
        let digest: ECDSADigest
        if let known = digests[algorithm] {
            digest = known
        } else if lenient {
            digest = .sha256
        } else {
            return .failure(
                Problem(
                    reason: "signature \(position) names the algorithm '\(algorithm)', not an OID Google accepts "
                        + "(\(SignatureInfo.ecdsaP256SHA256) ECDSA with SHA-256, \(SignatureInfo.ecdsaP256SHA512) with SHA-512)"))
        }
        var bytes = [UInt8](entry.signature)
        switch ECDSASignatureEncoding(bytes) {
        case .der:
            break
        case .rawP1363 where lenient:
            // 64 bytes, so the conversion cannot fail.
            bytes = ECDSASignatureEncoding.der(fromRaw: bytes) ?? bytes
        case .rawP1363:
            return .failure(Problem(reason: "signature \(position) is 64 raw bytes (r‖s), not the DER encoding GAEN requires"))
        case .unknown:
            return .failure(Problem(reason: "signature \(position) (\(bytes.count) bytes) is not a DER ECDSA signature"))
        }
        return .success(Signature(signature: bytes, digest: digest))
    }
}
