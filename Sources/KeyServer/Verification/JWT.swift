// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCrypto
import Foundation

/// ES256 JSON Web Tokens (RFC 7515/7518), as the verification protocol uses them: header
/// `{"alg":"ES256","kid":...,"typ":"JWT"}`, base64url parts, the signature as 64 bytes of r ‖ s
/// (libcrypto signs and verifies DER; the conversion is here).
package enum JWT {
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package var reason: String
        package init(reason: String) { self.reason = reason }
        package var description: String { reason }
    }

    package static func sign(_ claims: [String: Any], keyID: String, key: ECDSAPrivateKey) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": keyID, "typ": "JWT"], options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(Array(header)) + "." + Base64URL.encode(Array(payload))
        let der = try Array(input.utf8).withUnsafeBytes { bytes throws(CryptoError) in try key.sign(bytes) }
        guard let raw = rawSignature(fromDER: der) else { throw Failure(reason: "libcrypto returned a malformed signature") }
        return input + "." + Base64URL.encode(raw)
    }

    /// The claims of `token` if its ES256 signature verifies with `key` and it is within its
    /// `nbf`/`exp` at `now` (unix seconds).
    package static func verify(_ token: String, key: ECDSAPublicKey, now: Int64) throws(Failure) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw Failure(reason: "not a JWT") }
        guard let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any], header["alg"] as? String == "ES256" else {
            throw Failure(reason: "not an ES256 JWT")
        }
        guard signature.count == 64, let der = ECDSASignatureEncoding.der(fromRaw: signature) else {
            throw Failure(reason: "the signature is not 64 bytes of r and s")
        }
        let input = Array((parts[0] + "." + parts[1]).utf8)
        guard input.withUnsafeBytes({ key.verify(signature: der, message: $0) }) else { throw Failure(reason: "the signature does not verify") }
        guard let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any] else {
            throw Failure(reason: "the claims are not a JSON object")
        }
        if let expires = (claims["exp"] as? NSNumber)?.int64Value, now >= expires { throw Failure(reason: "expired") }
        if let notBefore = (claims["nbf"] as? NSNumber)?.int64Value, now < notBefore { throw Failure(reason: "not yet valid") }
        return claims
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` → r ‖ s, each left-padded to 32 bytes.
    static func rawSignature(fromDER der: [UInt8]) -> [UInt8]? {
        guard der.count >= 8, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return nil }
        var offset = 2
        var result = [UInt8]()
        for _ in 0..<2 {
            guard offset + 2 <= der.count, der[offset] == 0x02 else { return nil }
            let length = Int(der[offset + 1])
            guard offset + 2 + length <= der.count else { return nil }
            var integer = Array(der[(offset + 2)..<(offset + 2 + length)])
            while integer.count > 32, integer.first == 0 { integer.removeFirst() }
            guard integer.count <= 32 else { return nil }
            result += [UInt8](repeating: 0, count: 32 - integer.count) + integer
            offset += 2 + length
        }
        return offset == der.count ? result : nil
    }
}
