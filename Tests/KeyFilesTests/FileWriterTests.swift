// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import Testing

/// The key server writes its exports a key at a time (`KeyFileWriter.write(_:toFile:)`): the file
/// must hold exactly the export.bin the whole-archive writer makes, signed, under either digest.
@Suite(.ownThreads) struct FileWriterTests {
    @Test(arguments: [SignatureInfo.ecdsaP256SHA256, SignatureInfo.ecdsaP256SHA512])
    func aFileWrittenAKeyAtATimeIsTheArchivesExportSigned(_ algorithm: String) throws {
        let directory = try TemporaryDirectory()
        let signing = try ECDSAPrivateKey()
        var writer = KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1")
        writer.signatureInfo.signatureAlgorithm = algorithm
        // Enough keys for several 64 KiB buffers, revised keys, and batch fields.
        let export = KeyExport(
            startTimestamp: 1_700_000_000, endTimestamp: 1_700_003_600, region: "CH", batchNumber: 2, batchSize: 3,
            keys: WriterTests.keys(20_000), revisedKeys: WriterTests.keys(7, seed: 9))
        let path = directory.path + "/2-of-3.zip"
        try writer.write(export, toFile: path)
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let whole = try writer.archive(export)
        #expect(try KeyFileArchive(zip: written).exportBinary == KeyFileArchive(zip: whole).exportBinary)
        let trusted = try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)
        let file = try KeyFile(zip: written, policy: SignaturePolicy(trustedKeys: [trusted]))
        #expect(file.verdict == .verified(keyID: "310", keyVersion: "v1"))
        #expect(file.export.keys.count == 20_000 && file.export.revisedKeys.count == 7)
        // Nothing left beside it but the file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["2-of-3.zip"])
    }
}
