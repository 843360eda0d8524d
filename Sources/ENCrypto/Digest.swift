// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL

/// SHA-256, HMAC-SHA256 and HMAC-SHA512, one-shot.
package enum Digest {
    /// SHA-256 of `bytes`.
    package static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
        // SHA-256 of an in-memory buffer cannot fail but for an out-of-memory libcrypto.
        precondition(ok == 1 && length == 32, "SHA-256 failed")
        return digest
    }

    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256($0) }
    }

    /// HMAC-SHA256 of `message` under `key`.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        hmac(EVP_sha256(), length: 32, key: key, message: message)
    }

    /// HMAC-SHA512 of `message` under `key` (the verification server's code HMACs).
    package static func hmacSHA512(key: [UInt8], message: [UInt8]) -> [UInt8] {
        hmac(EVP_sha512(), length: 64, key: key, message: message)
    }

    /// One-shot HMAC with `digest`, whose output is `length` bytes.
    private static func hmac(_ digest: OpaquePointer?, length expected: Int, key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: expected)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(
                    digest, keyBytes.baseAddress, Int32(key.count),
                    messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count, &mac, &length)
            }
        }
        // An in-memory HMAC cannot fail but for an out-of-memory libcrypto.
        precondition(result != nil && Int(length) == expected, "HMAC failed")
        return mac
    }
}
