// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL
package import ENCore

/// Where new key material comes from. Production uses libcrypto's CSPRNG; tests inject a
/// deterministic source so that a key schedule's output can be predicted.
package protocol RandomBytesSource: Sendable {
    /// Fills `buffer` with unpredictable bytes, or throws if none can be had.
    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError)
}

extension RandomBytesSource {
    /// Sixteen fresh bytes: a new Temporary Exposure Key.
    package func bytes16() throws(CryptoError) -> Bytes16 {
        var block = Bytes16.zero
        try withUnsafeMutableBytes(of: &block.words) { (raw) throws(CryptoError) in try fill(raw) }
        return block
    }
}

/// libcrypto's CSPRNG (`RAND_bytes`), seeded by the kernel.
package struct SystemRandom: RandomBytesSource {
    package init() {}

    package func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        guard RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
            throw CryptoError.fromQueue("drawing \(buffer.count) random bytes")
        }
    }
}

/// A `RandomNumberGenerator` over a `RandomBytesSource`, so that the standard library's unbiased
/// draws (`Int.random(in:using:)`) take their bits from an injected source: tests give a
/// predictable one, production libcrypto's. A source that fails (it never should) is replaced by
/// the system's generator for that draw, which is also a CSPRNG: a draw cannot throw.
package struct RandomSourceGenerator: RandomNumberGenerator {
    let source: any RandomBytesSource
    private var fallback = SystemRandomNumberGenerator()

    package init(_ source: any RandomBytesSource) { self.source = source }

    package mutating func next() -> UInt64 {
        var value: UInt64 = 0
        do {
            try withUnsafeMutableBytes(of: &value) { (raw) throws(CryptoError) in try source.fill(raw) }
            return value
        } catch {
            return fallback.next()
        }
    }
}
