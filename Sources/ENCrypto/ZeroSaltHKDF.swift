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
        withUnsafeMutableBytes(of: &digest.words) { prk in
            let out = prk.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var context = innerAfterPad
            var key = inputKey.words
            _ = withUnsafeBytes(of: &key) { SHA256_Update(&context, $0.baseAddress, 16) }
            SHA256_Final(out, &context)
            context = outerAfterPad
            SHA256_Update(&context, out, 32)
            SHA256_Final(out, &context)
        }
        return digest
    }

    /// HKDF-Expand to 16 bytes: the first half of HMAC-SHA256(prk, info || 0x01).
    func expand16(_ prk: PseudorandomKey, info: ExpandInfo) -> Bytes16 {
        // The HMAC pads of a 32-byte key, built a word at a time: key XOR 0x36.., then 32 bytes of 0x36.
        let inner: UInt64 = 0x3636_3636_3636_3636
        let outer: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
        let k = prk.words
        var pad = (k.0 ^ inner, k.1 ^ inner, k.2 ^ inner, k.3 ^ inner, inner, inner, inner, inner)
        var message = info.message
        var digest = PseudorandomKey()
        withUnsafeMutableBytes(of: &digest.words) { digestBytes in
            let out = digestBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var context = SHA256_CTX()
            SHA256_Init(&context)
            _ = withUnsafeBytes(of: &pad) { SHA256_Update(&context, $0.baseAddress, 64) }
            _ = withUnsafeBytes(of: &message) { SHA256_Update(&context, $0.baseAddress, 8) }
            SHA256_Final(out, &context)
            pad = (k.0 ^ outer, k.1 ^ outer, k.2 ^ outer, k.3 ^ outer, outer, outer, outer, outer)
            SHA256_Init(&context)
            _ = withUnsafeBytes(of: &pad) { SHA256_Update(&context, $0.baseAddress, 64) }
            SHA256_Update(&context, out, 32)
            SHA256_Final(out, &context)
        }
        return Bytes16(words: (digest.words.0, digest.words.1))
    }

    /// The 32-byte output of HKDF-Extract, as four words in memory order.
    struct PseudorandomKey {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }

    /// A 7-byte info string with HKDF-Expand's block counter 0x01 appended: the whole message of the
    /// one HMAC a 16-byte output needs, held as one word so that nothing is looked up per key.
    struct ExpandInfo: Sendable {
        let message: UInt64

        init(_ info: StaticString) {
            precondition(info.utf8CodeUnitCount == 7, "GAEN's HKDF infos are 7 bytes")
            var bytes = (UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0x01))
            withUnsafeMutableBytes(of: &bytes) { raw in
                for index in 0..<7 { raw[index] = info.utf8Start[index] }
            }
            message = withUnsafeBytes(of: bytes) { $0.loadUnaligned(as: UInt64.self) }
        }

        /// "EN-RPIK": the info for the Rolling Proximity Identifier Key.
        static let rpik = ExpandInfo("EN-RPIK")
        /// "EN-AEMK": the info for the Associated Encrypted Metadata Key.
        static let aemk = ExpandInfo("EN-AEMK")
    }
}
