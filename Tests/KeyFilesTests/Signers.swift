// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import KeyFiles

/// A fresh signing key: the project's writer for it and the key a reader trusts, under one id.
struct Signer {
    var writer: KeyFileWriter
    var trusted: VerificationKey

    /// An empty `id` writes signatures without verification_key_id; `algorithm` is the OID the
    /// signature names (the writer signs with SHA-512 for ECDSA-with-SHA-512, else SHA-256).
    init(id: String, version: String = "v1", algorithm: String = SignatureInfo.ecdsaP256SHA256) throws {
        let key = try ECDSAPrivateKey()
        writer = KeyFileWriter(signingKey: key, keyID: id, keyVersion: version)
        writer.signatureInfo.signatureAlgorithm = algorithm
        trusted = try VerificationKey(keyID: id, keyVersion: version, pem: key.publicKeyPEM)
    }

    /// The same key trusted under another id and version.
    func trusted(as id: String, version: String = "v1") -> VerificationKey {
        VerificationKey(keyID: id, keyVersion: version, publicKey: trusted.publicKey)
    }

    /// 2020-05-20T00:00:00Z to 2020-05-21T00:00:00Z in the US, three keys, batch 1 of 1.
    static let export = KeyExport(startTimestamp: 1_589_932_800, endTimestamp: 1_590_019_200, region: "US", keys: WriterTests.keys(3))
}
