// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL

/// A SHA-256 or SHA-512 digest computed a chunk at a time: a key file's export.bin is hashed as it
/// is inflated, never held whole. Owns its EVP_MD_CTX; one task at a time.
package final class DigestStream {
    package let digest: ECDSADigest
    private let context: OpaquePointer

    package init(_ digest: ECDSADigest) throws(CryptoError) {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.fromQueue("creating a digest context") }
        guard EVP_DigestInit_ex(context, digest.md, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw CryptoError.fromQueue("starting a digest")
        }
        self.digest = digest
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        // Updating a digest of a valid context cannot fail but for an out-of-memory libcrypto.
        precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "digest update failed")
    }

    /// The digest of everything updated so far; the stream is then spent.
    package func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &output, &length) == 1, "digest final failed")
        return Array(output.prefix(Int(length)))
    }
}

extension ECDSAPublicKey {
    /// Whether `signature`, a DER ECDSA-Sig-Value, signs a message whose `digest` is `hash`
    /// (computed by a `DigestStream`): what `verify(signature:message:digest:)` decides, without
    /// the message.
    package func verify(signature: [UInt8], hash: [UInt8], digest: ECDSADigest) -> Bool {
        verifyPrehashed(signature: signature, hash: hash, md: digest.md)
    }
}
