// SPDX-License-Identifier: GPL-3.0-or-later

internal import CGaendShims
internal import COpenSSL

/// An ECDSA P-256 public key: what verifies key-file signatures.
///
/// Only P-256 (prime256v1) is accepted: GAEN pins the curve, and a key on any other curve (such as
/// the secp256k1 test key one health authority published) is refused when loaded, not at first use.
/// Immutable once made; the `EVP_PKEY` is owned here and freed with the value.
package final class ECDSAPublicKey: @unchecked Sendable {
    // @unchecked: the EVP_PKEY is only read after init; libcrypto allows concurrent verifies with
    // one key as long as each has its own EVP_MD_CTX, which `verify` makes.
    private let key: OpaquePointer

    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
    package init(pem: String) throws(CryptoError) {
        // Checked before it is stored: once stored, deinit owns (and frees) it.
        let candidate = try Self.read(pem: pem, what: "public key") { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        try Self.requireP256(candidate, what: "public key")
        key = candidate
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Whether `signature`, a DER ECDSA-Sig-Value, signs the `digest` of `message`.
    ///
    /// - Returns: `false` for a valid-looking signature that does not verify and for one that is not
    ///   DER at all; callers that need to tell the two apart check the encoding first
    ///   (`ECDSASignatureEncoding`).
    package func verify(signature: [UInt8], message: UnsafeRawBufferPointer, digest: ECDSADigest = .sha256) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, digest.md, nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = signature.withUnsafeBytes { sig in
            EVP_DigestVerify(
                context, sig.baseAddress?.assumingMemoryBound(to: UInt8.self), sig.count,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        }
        // A malformed signature leaves errors on the thread's queue; they are answered by `false`.
        ERR_clear_error()
        return result == 1
    }

    /// The ECDSA check of `signature` over a digest already computed with `md`.
    func verifyPrehashed(signature: [UInt8], hash: [UInt8], md: OpaquePointer?) -> Bool {
        guard let context = EVP_PKEY_CTX_new(key, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_verify_init(context) == 1, EVP_PKEY_CTX_set_signature_md(context, md) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = signature.withUnsafeBytes { sig in
            hash.withUnsafeBytes { digest in
                EVP_PKEY_verify(
                    context, sig.baseAddress?.assumingMemoryBound(to: UInt8.self), sig.count,
                    digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }

    /// The key as PEM.
    package var pem: String { Self.writePEM(key) { PEM_write_bio_PUBKEY($0, $1) } }

    static func read(pem: String, what: String, _ reader: (OpaquePointer) -> OpaquePointer?) throws(CryptoError) -> OpaquePointer {
        // A memory BIO reads the caller's buffer in place (BIO_new_mem_buf copies nothing), so the
        // BIO is created, read and freed inside the closure that keeps the bytes alive. Made
        // outside it, an optimized build may free the array before PEM_read_bio_* reads it.
        let bytes = Array(pem.utf8)
        guard let length = Int32(exactly: bytes.count) else {
            throw CryptoError(operation: "reading the PEM \(what)", reason: "the PEM is \(bytes.count) bytes, too long")
        }
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, length) else { return nil }
            defer { BIO_free(bio) }
            return reader(bio)
        }
        guard let key else {
            let error = CryptoError.fromQueue("reading the PEM \(what)")
            throw CryptoError(operation: error.operation, reason: "not a PEM \(what) (\(error.reason))")
        }
        return key
    }

    /// Frees `key` and throws unless it is a P-256 key.
    static func requireP256(_ key: OpaquePointer, what: String) throws(CryptoError) {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else {
            EVP_PKEY_free(key)
            throw CryptoError(operation: "checking the \(what)", reason: "not an elliptic-curve key; GAEN signatures are ECDSA P-256")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
            EVP_PKEY_free(key)
            throw CryptoError.fromQueue("reading the curve of the \(what)")
        }
        let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" || curve == "P-256" else {
            EVP_PKEY_free(key)
            throw CryptoError(operation: "checking the \(what)", reason: "the curve is \(curve), not P-256 (prime256v1)")
        }
    }

    static func writePEM(_ key: OpaquePointer, _ writer: (OpaquePointer, OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard writer(bio, key) == 1 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = cgaend_bio_get_mem_data(UnsafeMutableRawPointer(bio), &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}

/// An ECDSA P-256 private key: what signs key files (the key server and test data).
package final class ECDSAPrivateKey: @unchecked Sendable {
    // @unchecked: as for ECDSAPublicKey; `sign` makes its own context.
    private let key: OpaquePointer

    /// Reads a PEM private key (`PRIVATE KEY` or `EC PRIVATE KEY`).
    package init(pem: String) throws(CryptoError) {
        let candidate = try ECDSAPublicKey.read(pem: pem, what: "private key") { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
        try ECDSAPublicKey.requireP256(candidate, what: "private key")
        key = candidate
    }

    /// A new random P-256 key.
    package init() throws(CryptoError) {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw CryptoError.fromQueue("creating the key generation context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &generated) == 1, let generated
        else {
            throw CryptoError.fromQueue("generating a P-256 key")
        }
        key = generated
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// A DER ECDSA-Sig-Value over the `digest` of `message`.
    package func sign(_ message: UnsafeRawBufferPointer, digest: ECDSADigest = .sha256) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.fromQueue("creating the signing context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, digest.md, nil, key) == 1 else {
            throw CryptoError.fromQueue("starting an ECDSA signature")
        }
        let bytes = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length = 0
        guard EVP_DigestSign(context, nil, &length, bytes, message.count) == 1 else {
            throw CryptoError.fromQueue("sizing an ECDSA signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, bytes, message.count) == 1 else {
            throw CryptoError.fromQueue("making an ECDSA signature")
        }
        return Array(signature.prefix(length))
    }

    /// A DER ECDSA-Sig-Value over a message whose `digest` is `hash` (a `DigestStream`'s): what
    /// `sign(_:digest:)` makes, for a message too large to hold (an export.bin written a key at a
    /// time).
    package func sign(hash: [UInt8], digest: ECDSADigest) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(key, nil) else { throw CryptoError.fromQueue("creating the signing context") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_CTX_set_signature_md(context, digest.md) == 1 else {
            throw CryptoError.fromQueue("starting an ECDSA signature")
        }
        var length = 0
        guard EVP_PKEY_sign(context, nil, &length, hash, hash.count) == 1 else {
            throw CryptoError.fromQueue("sizing an ECDSA signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(context, &signature, &length, hash, hash.count) == 1 else {
            throw CryptoError.fromQueue("making an ECDSA signature")
        }
        return Array(signature.prefix(length))
    }

    /// The private key as PKCS#8 PEM.
    package var pem: String {
        ECDSAPublicKey.writePEM(key) { PEM_write_bio_PrivateKey($0, $1, nil, nil, 0, nil, nil) }
    }

    /// The matching public key as PEM.
    package var publicKeyPEM: String { ECDSAPublicKey.writePEM(key) { PEM_write_bio_PUBKEY($0, $1) } }
}

/// The hash an ECDSA signature is made over. Key files name it by OID: Google's verifier accepts
/// ECDSA with SHA-256 and with SHA-512 (`OID_TO_NAME_MAP` in its SignatureVerifier.java).
package enum ECDSADigest: Equatable, Sendable {
    case sha256
    case sha512

    /// libcrypto's static digest: never freed, so fine to hand out per call.
    var md: OpaquePointer? {
        switch self {
        case .sha256: return EVP_sha256()
        case .sha512: return EVP_sha512()
        }
    }
}

/// How an ECDSA signature is encoded, judged by its bytes alone.
package enum ECDSASignatureEncoding: Equatable, Sendable {
    /// ASN.1 DER `SEQUENCE { INTEGER r, INTEGER s }`, as GAEN requires (X9.62).
    case der
    /// 64 bytes of r ‖ s (IEEE P1363), as some signers emit: not accepted for GAEN.
    case rawP1363
    /// Neither.
    case unknown

    package init(_ signature: [UInt8]) {
        if Self.isDERSequenceOfTwoIntegers(signature) {
            self = .der
        } else if signature.count == 64 {
            self = .rawP1363
        } else {
            self = .unknown
        }
    }

    /// The DER `SEQUENCE { INTEGER r, INTEGER s }` of a 64-byte r ‖ s, with minimal INTEGERs; nil
    /// for any other length. For the signers that emit raw signatures (JWTs, some key servers).
    package static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    /// A strict structural check: one SEQUENCE with a short-form length spanning the rest, holding two
    /// INTEGERs of 1...33 bytes.
    private static func isDERSequenceOfTwoIntegers(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8, bytes.count <= 72, bytes[0] == 0x30, Int(bytes[1]) == bytes.count - 2 else { return false }
        var offset = 2
        for _ in 0..<2 {
            guard offset + 2 <= bytes.count, bytes[offset] == 0x02 else { return false }
            let length = Int(bytes[offset + 1])
            guard (1...33).contains(length), offset + 2 + length <= bytes.count else { return false }
            offset += 2 + length
        }
        return offset == bytes.count
    }
}
