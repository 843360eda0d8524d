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
    /// SHA-256's initial state.
    private let initial: SHA256_CTX

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
        var start = SHA256_CTX()
        SHA256_Init(&start)
        initial = start
    }

    /// HKDF-Extract: the pseudorandom key of `inputKey` (HMAC-SHA256 with the zero salt as its key).
    ///
    /// Each HMAC half is one SHA-256 block after the pad: the block is built here already padded
    /// (message, 0x80, zeros, bit length) and given to the block function directly, which skips the
    /// buffering `SHA256_Update`/`SHA256_Final` would do around it.
    func extract(_ inputKey: Bytes16) -> PseudorandomKey {
        var block = Block()
        block.words.0 = inputKey.words.0
        block.words.1 = inputKey.words.1
        block.setPadding(messageBytes: 16, totalBytes: 64 + 16)
        var context = innerAfterPad
        block.transform(&context)
        var inner = Self.digest(context)
        block = Block()
        block.words.0 = inner.words.0
        block.words.1 = inner.words.1
        block.words.2 = inner.words.2
        block.words.3 = inner.words.3
        block.setPadding(messageBytes: 32, totalBytes: 64 + 32)
        context = outerAfterPad
        block.transform(&context)
        inner = Self.digest(context)
        return inner
    }

    /// HKDF-Expand to 16 bytes: the first half of HMAC-SHA256(prk, info || 0x01).
    func expand16(_ prk: PseudorandomKey, info: ExpandInfo) -> Bytes16 {
        // The HMAC pads of a 32-byte key, built a word at a time: key XOR 0x36.., then 32 bytes of 0x36.
        let innerPad: UInt64 = 0x3636_3636_3636_3636
        let outerPad: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
        let k = prk.words
        var context = initial
        var block = Block(words: (k.0 ^ innerPad, k.1 ^ innerPad, k.2 ^ innerPad, k.3 ^ innerPad, innerPad, innerPad, innerPad, innerPad))
        block.transform(&context)
        block = Block()
        block.words.0 = info.message
        block.setPadding(messageBytes: 8, totalBytes: 64 + 8)
        block.transform(&context)
        let inner = Self.digest(context)
        context = initial
        block = Block(words: (k.0 ^ outerPad, k.1 ^ outerPad, k.2 ^ outerPad, k.3 ^ outerPad, outerPad, outerPad, outerPad, outerPad))
        block.transform(&context)
        block = Block()
        block.words.0 = inner.words.0
        block.words.1 = inner.words.1
        block.words.2 = inner.words.2
        block.words.3 = inner.words.3
        block.setPadding(messageBytes: 32, totalBytes: 64 + 32)
        block.transform(&context)
        let digest = Self.digest(context)
        return Bytes16(words: (digest.words.0, digest.words.1))
    }

    /// The SHA-256 state as the 32-byte digest: its eight words, big-endian.
    private static func digest(_ context: SHA256_CTX) -> PseudorandomKey {
        let h = context.h
        func pair(_ high: UInt32, _ low: UInt32) -> UInt64 {
            // Memory order: the bytes of `high` big-endian, then those of `low`.
            var words = (high.bigEndian, low.bigEndian)
            return withUnsafeBytes(of: &words) { $0.loadUnaligned(as: UInt64.self) }
        }
        return PseudorandomKey(words: (pair(h.0, h.1), pair(h.2, h.3), pair(h.4, h.5), pair(h.6, h.7)))
    }

    /// One 64-byte SHA-256 block as eight words in memory order.
    struct Block {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        /// Appends SHA-256's padding after `messageBytes` of message: 0x80, zeros, and the bit
        /// length of everything hashed (`totalBytes`, pad block included) in the last 8 bytes.
        mutating func setPadding(messageBytes: Int, totalBytes: Int) {
            withUnsafeMutableBytes(of: &words) { raw in
                raw[messageBytes] = 0x80
                raw.storeBytes(of: UInt64(totalBytes * 8).bigEndian, toByteOffset: 56, as: UInt64.self)
            }
        }

        mutating func transform(_ context: inout SHA256_CTX) {
            withUnsafeBytes(of: &words) { raw in
                SHA256_Transform(&context, raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
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
