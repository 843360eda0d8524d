// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL
import ENCore

/// HKDF-SHA256 with GAEN's fixed shape: a NULL (32 zero bytes) salt, a 16-byte input key, a short
/// info string and 16 bytes of output. Matching runs it once per diagnosis key, millions of times.
///
/// The extract step is HMAC keyed with the constant salt, so the SHA-256 states after the inner and
/// outer pad blocks are the same for every key: they are computed once and copied (a plain struct
/// copy, no allocation), which saves two of the eight compression-function calls and every
/// allocation an EVP context would make. Values of this type are immutable and can be shared.
struct ZeroSaltHKDF: @unchecked Sendable {
    // @unchecked: SHA256_CTX is a plain C struct of integers, copied by value and never mutated
    // after init.
    private let innerAfterPad: SHA256_CTX
    private let outerAfterPad: SHA256_CTX

    init() {
        var inner = SHA256_CTX()
        var outer = SHA256_CTX()
        SHA256_Init(&inner)
        SHA256_Init(&outer)
        // HMAC pads: the 32 zero key bytes padded to the 64-byte block, XORed with 0x36 and 0x5c.
        let innerPad = [UInt8](repeating: 0x36, count: 64)
        let outerPad = [UInt8](repeating: 0x5C, count: 64)
        SHA256_Update(&inner, innerPad, 64)
        SHA256_Update(&outer, outerPad, 64)
        innerAfterPad = inner
        outerAfterPad = outer
    }

    /// HKDF-Extract: the pseudorandom key of `inputKey` (HMAC-SHA256 with the zero salt as its key).
    func extract(_ inputKey: Bytes16) -> PseudorandomKey {
        var digest = PseudorandomKey()
        withUnsafeMutableBytes(of: &digest.bytes) { prk in
            var context = innerAfterPad
            _ = inputKey.withUnsafeBytes { SHA256_Update(&context, $0.baseAddress, 16) }
            SHA256_Final(prk.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
            context = outerAfterPad
            SHA256_Update(&context, prk.baseAddress, 32)
            SHA256_Final(prk.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
        }
        return digest
    }

    /// HKDF-Expand to 16 bytes: the first half of HMAC-SHA256(prk, info || 0x01).
    func expand16(_ prk: PseudorandomKey, info: ExpandInfo) -> Bytes16 {
        var prk = prk
        return withUnsafeBytes(of: &prk.bytes) { key in
            var pad = (Bytes16.zero, Bytes16.zero, Bytes16.zero, Bytes16.zero)
            var digest = (Bytes16.zero, Bytes16.zero)
            return withUnsafeMutableBytes(of: &pad) { pad in
                withUnsafeMutableBytes(of: &digest) { digest in
                    let out = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    var context = SHA256_CTX()
                    Self.fillPad(pad, key: key, with: 0x36)
                    SHA256_Init(&context)
                    SHA256_Update(&context, pad.baseAddress, 64)
                    _ = info.withMessage { SHA256_Update(&context, $0.baseAddress, $0.count) }
                    SHA256_Final(out, &context)
                    Self.fillPad(pad, key: key, with: 0x5C)
                    SHA256_Init(&context)
                    SHA256_Update(&context, pad.baseAddress, 64)
                    SHA256_Update(&context, out, 32)
                    SHA256_Final(out, &context)
                    return Bytes16(loadingFrom: UnsafeRawPointer(out))
                }
            }
        }
    }

    /// The 64-byte HMAC pad of a 32-byte key.
    private static func fillPad(_ pad: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer, with value: UInt8) {
        for index in 0..<32 { pad[index] = key[index] ^ value }
        for index in 32..<64 { pad[index] = value }
    }

    /// The 32-byte output of HKDF-Extract.
    struct PseudorandomKey {
        var bytes: (Bytes16, Bytes16) = (.zero, .zero)
    }

    /// An info string with HKDF-Expand's block counter 0x01 appended: the whole message of the one
    /// HMAC a 16-byte output needs.
    struct ExpandInfo: Sendable {
        private let message: [UInt8]

        init(_ info: String) {
            message = Array(info.utf8) + [0x01]
        }

        func withMessage<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            message.withUnsafeBytes(body)
        }

        /// "EN-RPIK": the info for the Rolling Proximity Identifier Key.
        static let rpik = ExpandInfo("EN-RPIK")
        /// "EN-AEMK": the info for the Associated Encrypted Metadata Key.
        static let aemk = ExpandInfo("EN-AEMK")
    }
}
