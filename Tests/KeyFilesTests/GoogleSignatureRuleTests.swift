// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCrypto
import KeyFiles
import Testing

/// The strict policy judges signatures as Google's SignatureVerifier.createCosignatureVerifications
/// does with ignoreUnmatchedSignatures on, each trusted key being a key set of its own.
@Suite(.ownThreads) struct GoogleSignatureRuleTests {
    func verdict(_ zip: [UInt8], trusting keys: [VerificationKey], lenient: Bool = false) throws -> Verdict {
        try KeyFile(zip: zip, policy: SignaturePolicy(trustedKeys: keys, lenient: lenient)).verdict
    }

    @Test func aLoneSignatureWithoutKeyIDIsCheckedWithTheConfiguredKey() throws {
        let keyless = try Signer(id: "")
        let zip = try keyless.writer.archive(Signer.export)
        #expect(try verdict(zip, trusting: [keyless.trusted(as: "310")]) == .verified(keyID: "310", keyVersion: "v1"))
        // Every trusted key is a one-key set of its own, so each is tried.
        let other = try Signer(id: "999")
        #expect(try verdict(zip, trusting: [other.trusted, keyless.trusted(as: "310")]) == .verified(keyID: "310", keyVersion: "v1"))
        // Checked, not waved through: another key's check fails.
        #expect(try verdict(zip, trusting: [other.trusted]).name == "bad-signature")
    }

    @Test func aSignatureWithoutKeyIDAmongTwoMakesTheFileInvalid() throws {
        let keyless = try Signer(id: "")
        let named = try Signer(id: "310")
        let zip = try KeyFileWriter.archive(Signer.export, signers: [named.writer, keyless.writer])
        let result = try verdict(zip, trusting: [named.trusted])
        #expect(result == .invalid("signature 1 in a cosigning group of 2 does not specify verification_key_id"))
        // Both named: the trusted key's signature verifies and the other is skipped.
        let second = try Signer(id: "311")
        #expect(try verdict(KeyFileWriter.archive(Signer.export, signers: [second.writer, named.writer]), trusting: [named.trusted]).isVerified)
    }

    @Test func ecdsaWithSHA512Verifies() throws {
        let signer = try Signer(id: "310", algorithm: SignatureInfo.ecdsaP256SHA512)
        let zip = try signer.writer.archive(Signer.export)
        #expect(try verdict(zip, trusting: [signer.trusted]) == .verified(keyID: "310", keyVersion: "v1"))
    }

    @Test func aSignatureIsCheckedWithTheDigestItWasMadeWith() throws {
        // What makes the SHA-512 file verify: the key checks with the digest asked for.
        let signer = try Signer(id: "310")
        let message: [UInt8] = Array("EK Export v1    ".utf8)
        let sha256 = try message.withUnsafeBytes { try signer.writer.signingKey.sign($0) }
        let sha512 = try message.withUnsafeBytes { try signer.writer.signingKey.sign($0, digest: .sha512) }
        let key = signer.trusted.publicKey
        message.withUnsafeBytes { bytes in
            #expect(key.verify(signature: sha256, message: bytes))
            #expect(!key.verify(signature: sha256, message: bytes, digest: .sha512))
            #expect(key.verify(signature: sha512, message: bytes, digest: .sha512))
            #expect(!key.verify(signature: sha512, message: bytes))
        }
    }

    @Test func anOtherOIDOnATrustedKeysSignatureIsInvalid() throws {
        let signer = try Signer(id: "310", algorithm: "1.2.840.10045.4.3.3")  // ECDSA with SHA-384
        let result = try verdict(signer.writer.archive(Signer.export), trusting: [signer.trusted])
        #expect(result.name == "invalid")
        #expect(result.reason?.hasPrefix("signature 0 names the algorithm '1.2.840.10045.4.3.3', not an OID Google accepts") == true)
        // Lenient accepts a name it does not know and checks with SHA-256.
        #expect(try verdict(signer.writer.archive(Signer.export), trusting: [signer.trusted], lenient: true).isVerified)
    }

    @Test func anUnmatchedSignatureIsSkippedWhateverItsAlgorithm() throws {
        let trusted = try Signer(id: "310")
        let odd = try Signer(id: "999", algorithm: "ecdsa-with-SHA256")
        let zip = try KeyFileWriter.archive(Signer.export, signers: [odd.writer, trusted.writer])
        #expect(try verdict(zip, trusting: [trusted.trusted]) == .verified(keyID: "310", keyVersion: "v1"))
        // Alone, it is only unknown.
        let alone = try verdict(odd.writer.archive(Signer.export), trusting: [trusted.trusted])
        #expect(alone.name == "unknown-key")
    }

    @Test func everySignatureNamingTheKeyMustVerify() throws {
        // Two signatures name the trusted key; the second was made by another key.
        let trusted = try Signer(id: "310")
        var impostor = try Signer(id: "999")
        impostor.writer.signatureInfo = trusted.writer.signatureInfo
        let zip = try KeyFileWriter.archive(Signer.export, signers: [trusted.writer, impostor.writer])
        #expect(try verdict(zip, trusting: [trusted.trusted]).name == "bad-signature")
    }

    @Test func theSignatureCountIsCheckedAfterTheSignature() throws {
        // export.bin lists two signature infos, export.sig holds one valid signature.
        let first = try Signer(id: "310")
        let second = try Signer(id: "311")
        let binary = try KeyFileArchive(zip: KeyFileWriter.archive(Signer.export, signers: [first.writer, second.writer])).exportBinary
        let zip = KeyFileWriter.zip([(KeyFileArchive.binaryName, binary), (KeyFileArchive.signatureName, try first.writer.exportSignature(for: binary))])
        #expect(try verdict(zip, trusting: [first.trusted]) == .invalid("export.sig has 1 signature(s) but export.bin lists 2 signature info(s)"))
        #expect(try verdict(zip, trusting: [first.trusted], lenient: true).isVerified)
    }
}
