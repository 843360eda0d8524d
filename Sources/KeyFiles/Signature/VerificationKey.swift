// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCrypto

/// A public key the daemon trusts for key files, with the key id and version files name it by.
package struct VerificationKey: Sendable {
    package var keyID: String
    package var keyVersion: String
    package var publicKey: ECDSAPublicKey

    package init(keyID: String, keyVersion: String, publicKey: ECDSAPublicKey) {
        self.keyID = keyID
        self.keyVersion = keyVersion
        self.publicKey = publicKey
    }

    /// Reads the key from PEM text. Refuses anything but an ECDSA P-256 key.
    package init(keyID: String, keyVersion: String, pem: String) throws(CryptoError) {
        self.init(keyID: keyID, keyVersion: keyVersion, publicKey: try ECDSAPublicKey(pem: pem))
    }
}

/// What checking a file's signature concluded.
package enum Verdict: Equatable, Sendable, CustomStringConvertible {
    /// A signature by a trusted key verified over the whole export.bin.
    case verified(keyID: String, keyVersion: String)
    /// export.sig holds no signature.
    case unsigned
    /// A trusted key's signature did not verify: the file was altered, or signed by another key.
    case badSignature(String)
    /// No signature names a trusted key.
    case unknownKey(String)
    /// The file breaks the format's signature rules (algorithm, encoding, counts) or is unusable.
    case invalid(String)

    /// The verdict's name as the tools print it.
    package var name: String {
        switch self {
        case .verified: return "verified"
        case .unsigned: return "unsigned"
        case .badSignature: return "bad-signature"
        case .unknownKey: return "unknown-key"
        case .invalid: return "invalid"
        }
    }

    package var reason: String? {
        switch self {
        case .verified, .unsigned: return nil
        case .badSignature(let reason), .unknownKey(let reason), .invalid(let reason): return reason
        }
    }

    package var isVerified: Bool {
        if case .verified = self { return true }
        return false
    }

    package var description: String {
        switch self {
        case .verified(let id, let version): return "verified (key id '\(id)' version '\(version)')"
        default: return reason.map { "\(name): \($0)" } ?? name
        }
    }
}
