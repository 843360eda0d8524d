// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import KeyFiles
import Testing

/// Batches across files, grouped as Google groups them: the same export.bin header but batch_num.
@Suite(.ownThreads) struct BatchCompletenessTests {
    static func part(_ number: Int32, of size: Int32, region: String = "US") -> KeyExport {
        var export = Signer.export
        export.batchNumber = number
        export.batchSize = size
        export.region = region
        return export
    }

    @Test func aWholeBatchIsComplete() {
        #expect(BatchCompleteness.incomplete([("a", Self.part(1, of: 2)), ("b", Self.part(2, of: 2))]).isEmpty)
        #expect(BatchCompleteness.incomplete([("b", Self.part(2, of: 2)), ("a", Self.part(1, of: 2))]).isEmpty)
    }

    @Test func aMissingPartIsNamedForEveryFileOfTheBatch() {
        #expect(
            BatchCompleteness.incomplete([("a", Self.part(1, of: 2))])
                == ["a": "batch 1 of 2 (2020-05-20T00:00:00Z to 2020-05-21T00:00:00Z, US): file(s) 2 of the batch are missing"])
        let reasons = BatchCompleteness.incomplete([("b", Self.part(2, of: 6)), ("e", Self.part(5, of: 6)), ("e2", Self.part(5, of: 6))])
        #expect(Set(reasons.keys) == ["b", "e", "e2"])
        #expect(reasons["e"]?.hasSuffix("file(s) 1, 3-4, 6 of the batch are missing") == true)
    }

    @Test func singleFilesAreBatchesOfTheirOwn() {
        var unbatched = Signer.export
        unbatched.hasBatchNumber = false
        unbatched.hasBatchSize = false
        unbatched.batchNumber = 0
        unbatched.batchSize = 0
        #expect(BatchCompleteness.incomplete([("one", Self.part(1, of: 1)), ("none", unbatched)]).isEmpty)
    }

    @Test func filesDifferingInMoreThanBatchNumberAreOtherBatches() {
        // Same numbers, another region: two batches, each missing a part.
        let reasons = BatchCompleteness.incomplete([("us", Self.part(1, of: 2)), ("de", Self.part(2, of: 2, region: "DE"))])
        #expect(reasons["us"]?.hasSuffix("file(s) 2 of the batch are missing") == true)
        #expect(reasons["de"]?.hasSuffix("file(s) 1 of the batch are missing") == true)
        var otherSigner = Self.part(2, of: 2)
        otherSigner.signatureInfos = [SignatureInfo(verificationKeyID: "311", verificationKeyVersion: "v1")]
        #expect(BatchCompleteness.incomplete([("a", Self.part(1, of: 2)), ("b", otherSigner)]).count == 2)
    }

    @Test func outOfRangeNumbersCompleteNothing() {
        #expect(BatchCompleteness.incomplete([("a", Self.part(1, of: 2)), ("c", Self.part(3, of: 2))]).count == 2)
        // A huge claimed size costs no more than the files given.
        let huge = BatchCompleteness.incomplete([("a", Self.part(1, of: .max))])
        #expect(huge["a"]?.hasSuffix("file(s) 2-2147483647 of the batch are missing") == true)
    }
}
