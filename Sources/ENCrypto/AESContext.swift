// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL

/// One owned `EVP_CIPHER_CTX` for AES-128 in one mode, re-keyed in place.
///
/// The cipher is fetched from the provider once and the context is kept, so a new key costs only
/// the key schedule: no allocation and no provider lookup per key. Not `Sendable`: each task that
/// encrypts owns its own.
final class AESContext {
    enum Mode: String {
        case ecb = "AES-128-ECB"
        case ctr = "AES-128-CTR"
    }

    private let cipher: OpaquePointer
    private let context: OpaquePointer
    let mode: Mode

    init(_ mode: Mode) throws(CryptoError) {
        self.mode = mode
        guard let cipher = EVP_CIPHER_fetch(nil, mode.rawValue, nil) else {
            throw CryptoError.fromQueue("fetching \(mode.rawValue) from the libcrypto provider")
        }
        guard let context = EVP_CIPHER_CTX_new() else {
            EVP_CIPHER_free(cipher)
            throw CryptoError.fromQueue("creating the \(mode.rawValue) context")
        }
        let zeroKey = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptInit_ex2(context, cipher, zeroKey, mode == .ctr ? zeroKey : nil, nil) == 1,
            EVP_CIPHER_CTX_set_padding(context, 0) == 1
        else {
            EVP_CIPHER_CTX_free(context)
            EVP_CIPHER_free(cipher)
            throw CryptoError.fromQueue("initialising \(mode.rawValue)")
        }
        self.cipher = cipher
        self.context = context
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        EVP_CIPHER_free(cipher)
    }

    /// Sets a new key (and, in CTR mode, a new initial counter block) and encrypts `count` bytes
    /// from `input` to `output` in one call. In ECB mode `count` must be a multiple of 16.
    ///
    /// A failure here means libcrypto refused a context it accepted at init with a valid key length,
    /// which no input can cause: it traps rather than throwing into every caller of the hot loop.
    @inline(__always)
    func encrypt(
        key: UnsafeRawPointer, iv: UnsafeRawPointer?, input: UnsafeRawPointer, output: UnsafeMutableRawPointer,
        count: Int
    ) {
        let keyBytes = key.assumingMemoryBound(to: UInt8.self)
        let ivBytes = iv?.assumingMemoryBound(to: UInt8.self)
        guard EVP_EncryptInit_ex2(context, nil, keyBytes, ivBytes, nil) == 1 else {
            preconditionFailure("\(mode.rawValue): re-keying failed: \(CryptoError.fromQueue("re-keying"))")
        }
        var written: Int32 = 0
        let result = EVP_EncryptUpdate(
            context, output.assumingMemoryBound(to: UInt8.self), &written,
            input.assumingMemoryBound(to: UInt8.self), Int32(count))
        precondition(result == 1 && Int(written) == count, "\(mode.rawValue): encrypting \(count) bytes failed")
    }
}
