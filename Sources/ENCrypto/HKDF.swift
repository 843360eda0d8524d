// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL

/// HKDF-SHA256 (RFC 5869) through libcrypto's own KDF, for any salt, info and length.
///
/// This is the general, obviously-right path; `ExposureKeyCrypto` derives RPIKs and AEMKs with a
/// faster construction of the same function, and the tests hold the two against each other.
package enum HKDF {
    /// Derives `length` bytes from `inputKeyMaterial`. An empty `salt` means RFC 5869's default, a
    /// string of 32 zero bytes, which is what GAEN's "NULL salt" is.
    package static func sha256(
        inputKeyMaterial: [UInt8], salt: [UInt8] = [], info: [UInt8], length: Int
    ) throws(CryptoError) -> [UInt8] {
        // The EVP_PKEY interface takes the key and info by value, so there are no OSSL_PARAM name
        // strings whose lifetime must outlast the call (see docs/platform.md, C interop).
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else {
            throw CryptoError.fromQueue("creating the HKDF context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1,
            EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) == 1,
            EVP_PKEY_CTX_set1_hkdf_key(context, inputKeyMaterial, Int32(inputKeyMaterial.count)) == 1,
            salt.isEmpty || EVP_PKEY_CTX_set1_hkdf_salt(context, salt, Int32(salt.count)) == 1,
            EVP_PKEY_CTX_add1_hkdf_info(context, info, Int32(info.count)) == 1
        else {
            throw CryptoError.fromQueue("setting up HKDF-SHA256")
        }
        var output = [UInt8](repeating: 0, count: length)
        var outputLength = length
        guard EVP_PKEY_derive(context, &output, &outputLength) == 1, outputLength == length else {
            throw CryptoError.fromQueue("deriving \(length) bytes with HKDF-SHA256")
        }
        return output
    }
}
