// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import KeyFiles
import Testing

/// One file's batch fields, judged as Google's SignatureVerifier.verify judges export.bin's (after
/// the signature), never export.sig's copies.
@Suite(.ownThreads) struct BatchRuleTests {
    func verdict(number: Int32?, size: Int32?, signatureBatch: KeyExport? = nil) throws -> Verdict {
        let signer = try Signer(id: "310")
        var export = Signer.export
        export.batchNumber = number ?? 0
        export.hasBatchNumber = number != nil
        export.batchSize = size ?? 0
        export.hasBatchSize = size != nil
        var zip = try signer.writer.archive(export)
        if let signatureBatch {
            let binary = try KeyFileArchive(zip: zip).exportBinary
            zip = KeyFileWriter.zip([
                (KeyFileArchive.binaryName, binary), (KeyFileArchive.signatureName, try signer.writer.exportSignature(for: binary, batch: signatureBatch)),
            ])
        }
        let file = try KeyFile(zip: zip, policy: SignaturePolicy(trustedKeys: [signer.trusted]))
        #expect(file.export.hasBatchNumber == (number != nil) && file.export.hasBatchSize == (size != nil))
        return file.verdict
    }

    let window = "(2020-05-20T00:00:00Z to 2020-05-21T00:00:00Z, US)"

    @Test func wellFormedBatchFieldsVerify() throws {
        #expect(try verdict(number: 1, size: 1).isVerified)
        #expect(try verdict(number: 2, size: 2).isVerified)
        #expect(try verdict(number: 1_000_000, size: 1_000_000).isVerified)
        // Without batch_size the file is a batch of its own, with or without batch_num.
        #expect(try verdict(number: nil, size: nil).isVerified)
        #expect(try verdict(number: 7, size: nil).isVerified)
    }

    @Test func batchSizeWithoutBatchNumberIsInvalid() throws {
        #expect(try verdict(number: nil, size: 2) == .invalid("batch (no batch_num) of 2 \(window): export.bin has batch_size but no batch_num"))
    }

    @Test func batchNumberOutsideOneToBatchSizeIsInvalid() throws {
        #expect(try verdict(number: 0, size: 2) == .invalid("batch 0 of 2 \(window): batch_num must be 1 or more"))
        #expect(try verdict(number: -1, size: 2).name == "invalid")
        #expect(try verdict(number: 3, size: 2) == .invalid("batch 3 of 2 \(window): batch_num is greater than batch_size"))
    }

    @Test func batchSizeOverGooglesLimitIsInvalid() throws {
        #expect(
            try verdict(number: 1, size: 1_000_001)
                == .invalid("batch 1 of 1000001 \(window): batch_size is over Google's limit of 1000000"))
    }

    @Test func theSignaturesOwnBatchFieldsAreNotJudged() throws {
        // export.bin says 1 of 1; export.sig's copy says 5 of 2, which the old rule refused.
        #expect(try verdict(number: 1, size: 1, signatureBatch: KeyExport(batchNumber: 5, batchSize: 2)).isVerified)
    }

    @Test func aBadSignatureIsReportedBeforeTheBatchFields() throws {
        let signer = try Signer(id: "310")
        let other = try Signer(id: "999")
        var export = Signer.export
        export.batchNumber = 3
        export.batchSize = 2
        let file = try KeyFile(zip: signer.writer.archive(export), policy: SignaturePolicy(trustedKeys: [other.trusted(as: "310")]))
        #expect(file.verdict.name == "bad-signature")
    }
}
