// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCrypto
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
        let plan = plan(exportSignature: exportSignature)
        var hashes = [ECDSADigest: [UInt8]]()
        for digest in plan.digests {
            // A digest of bytes in memory cannot fail but for an out-of-memory libcrypto.
            let stream = try! DigestStream(digest)
            exportBinary.withUnsafeBytes { stream.update($0) }
            hashes[digest] = stream.finish()
        }
        return verdict(plan, hashes: hashes, export: export)
    }

    /// What export.sig asks of export.bin, judged before export.bin is read: a verdict already
    /// (undecodable, unsigned, a bad signature entry, no trusted key named), or the digests of
    /// export.bin its signatures need. Detection hashes export.bin as it streams it, once.
    package struct Plan {
        fileprivate enum State {
            case decided(Verdict)
            case verify(count: Int, match: SignatureMatch)
        }

        fileprivate var state: State
        /// The digests of export.bin the verdict needs (none when it is decided).
        package var digests: Set<ECDSADigest> {
            guard case .verify(_, let match) = state else { return [] }
            return Set(match.byKey.flatMap { $0.signatures.map(\.digest) })
        }
    }

    package func plan(exportSignature: [UInt8]) -> Plan {
        let list: PBTEKSignatureList
        do {
            list = try PBTEKSignatureList(serializedBytes: exportSignature)
        } catch {
            return Plan(state: .decided(.invalid("export.sig is not a TEKSignatureList (\(error))")))
        }
        if list.signatures.isEmpty { return Plan(state: .decided(.unsigned)) }
        let match: SignatureMatch
        switch SignatureMatch.make(list.signatures, trustedKeys: trustedKeys, lenient: lenient) {
        case .success(let made): match = made
        case .failure(let problem): return Plan(state: .decided(.invalid(problem.reason)))
        }
        guard !match.byKey.isEmpty else {
            let seen = list.signatures.map { "'\($0.signatureInfo.verificationKeyID)' version '\($0.signatureInfo.verificationKeyVersion)'" }
            let trusted = trustedKeys.map { "'\($0.keyID)' version '\($0.keyVersion)'" }
            return Plan(
                state: .decided(
                    .unknownKey("signed by \(seen.joined(separator: ", ")); trusted: \(trusted.isEmpty ? "none" : trusted.joined(separator: ", "))")))
        }
        return Plan(state: .verify(count: list.signatures.count, match: match))
    }

    /// The verdict of a plan, with export.bin's digests (`hashes`, those the plan asked for) and its
    /// header fields.
    package func verdict(_ plan: Plan, hashes: [ECDSADigest: [UInt8]], export: KeyExport) -> Verdict {
        let count: Int
        let match: SignatureMatch
        switch plan.state {
        case .decided(let verdict): return verdict
        case .verify(let signatures, let matched): (count, match) = (signatures, matched)
        }
        var signed: Verdict?
        for (key, matched) in match.byKey {
            // Every signature naming the key must verify, as every signature of a Google key set.
            let valid = matched.allSatisfy { signature in
                hashes[signature.digest].map { key.publicKey.verify(signature: signature.signature, hash: $0, digest: signature.digest) } ?? false
            }
            if valid {
                signed = .verified(keyID: key.keyID, keyVersion: key.keyVersion)
                break
            }
        }
        guard let signed else {
            let first = match.byKey[0].key
            return .badSignature("the signature by key '\(first.keyID)' version '\(first.keyVersion)' does not verify over export.bin")
        }
        if let problem = export.batchProblem { return .invalid(problem) }
        if !lenient, count != export.signatureInfos.count {
            return .invalid("export.sig has \(count) signature(s) but export.bin lists \(export.signatureInfos.count) signature info(s)")
        }
        return signed
    }
}
