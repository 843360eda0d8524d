// SPDX-License-Identifier: GPL-3.0-or-later

internal import COpenSSL

/// SHA-256 and HMAC-SHA256, one-shot.
public enum Digest {
    /// SHA-256 of `bytes`.
    public static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
        // SHA-256 of an in-memory buffer cannot fail but for an out-of-memory libcrypto.
        precondition(ok == 1 && length == 32, "SHA-256 failed")
        return digest
    }

    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256($0) }
    }

    /// HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(
                    EVP_sha256(), keyBytes.baseAddress, Int32(key.count),
                    messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count, &mac, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA256 failed")
        return mac
    }
}
