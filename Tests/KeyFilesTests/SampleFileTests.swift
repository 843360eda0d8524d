// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCore
import ENCrypto
import KeyFiles
import Testing

/// Every sample in the project's fixtures gets the verdict and contents an independent check found.
@Suite(.ownThreads) struct SampleFileTests {
    @Test func googleServerTestExportVerifiesWithItsKey() throws {
        let key = try Samples.key("google-ens-examples-export-public.pem", id: "some_id", version: "1")
        for name in ["google-ens-testExport-2-records-1-of-1.zip", "google-ens-testExport-2-records-1-of-1-2020-05-20.zip"] {
            let file = try KeyFile(zip: Samples.fixture(name), policy: SignaturePolicy(trustedKeys: [key]))
            #expect(file.verdict == .verified(keyID: "some_id", keyVersion: "1"), "\(name)")
            #expect(file.export.region == "US")
            #expect(file.export.batchNumber == 1 && file.export.batchSize == 1)
            #expect(file.export.keys.count == 2)
            #expect(file.export.dropped.isEmpty)
            #expect(file.export.signatureInfos == [SignatureInfo(verificationKeyID: "some_id", verificationKeyVersion: "1")])
        }
        let file = try KeyFile(zip: Samples.fixture("google-ens-testExport-2-records-1-of-1.zip"), policy: SignaturePolicy(trustedKeys: [key]))
        #expect(file.export.startTimestamp == 1_590_159_600)
        #expect(file.export.endTimestamp == 1_590_246_000)
        let first = file.export.keys[0]
        #expect(first.key.keyData.hex == "172fc480e598490c34177604339b1543")
        #expect(first.key.rollingStartIntervalNumber.rawValue == 2_649_980)
        #expect(first.key.rollingPeriod == 1)
        #expect(first.transmissionRiskLevel == 8)
        #expect(file.export.keys[1].key.rollingPeriod == 114)
    }

    @Test func aFileFromAnotherServerIsUnknownAndAWrongKeyIsABadSignature() throws {
        let bytes = try Samples.fixture("google-ens-testExport-2-records-1-of-1.zip")
        let other = try Samples.key("cwa-dev-public.pem", id: "262", version: "v1")
        #expect(try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [other])).verdict.name == "unknown-key")
        #expect(try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [])).verdict.name == "unknown-key")
        // The right id and version but another key's bytes.
        let impostor = try Samples.key("cwa-dev-public.pem", id: "some_id", version: "1")
        #expect(try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [impostor])).verdict.name == "bad-signature")
    }

    @Test func theSignatureCoversTheHeader() throws {
        // Re-zip the same export.bin with one header byte changed: the signature must fail.
        let key = try Samples.key("google-ens-examples-export-public.pem", id: "some_id", version: "1")
        let archive = try KeyFileArchive(zip: Samples.fixture("google-ens-testExport-2-records-1-of-1.zip"))
        var binary = archive.exportBinary
        binary[11] = UInt8(ascii: "2")  // "EK Export v2"
        #expect(throws: KeyFileError.badHeader) { try ExportBinary.parse(binary) }
        let verdict = SignaturePolicy(trustedKeys: [key]).verdict(
            exportBinary: binary, exportSignature: archive.exportSignature, export: try ExportBinary.parse(archive.exportBinary))
        #expect(verdict.name == "bad-signature")
        var body = archive.exportBinary
        body[body.count - 1] ^= 1
        let tampered = SignaturePolicy(trustedKeys: [key]).verdict(
            exportBinary: body, exportSignature: archive.exportSignature, export: try ExportBinary.parse(archive.exportBinary))
        #expect(tampered.name == "bad-signature")
    }

    @Test func theAndroidSampleOfJulyHasAbsentRollingPeriodsThatMean144() throws {
        let key = try Samples.key("google-en-internals-310-v1-public.pem", id: "310", version: "v1")
        let file = try KeyFile(zip: Samples.fixture("google-en-android-sample_diagnosis_key_file-2020-07.zip"), policy: SignaturePolicy(trustedKeys: [key]))
        #expect(file.verdict.isVerified)
        #expect(file.export.keys.count == 140)
        #expect(file.export.keys.allSatisfy { $0.key.rollingPeriod == 144 })
        #expect(Set(file.export.keys.map(\.transmissionRiskLevel)) == [3, 4, 5, 6, 7, 8])
    }

    @Test func theAndroidSampleOfMayNamesItsAlgorithmAndHasNoSignatureInfo() throws {
        // Its one signature has no verification_key_id, so it is checked with the trusted key
        // whatever that key's id (Google's one-key set), and then its algorithm is a name.
        let key = try Samples.key("google-ens-sample-export-public.pem", id: "any", version: "v1")
        let bytes = try Samples.fixture("google-en-android-sample_diagnosis_key_file-2020-05.zip")
        let strict = try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [key]))
        #expect(strict.verdict.name == "invalid")
        #expect(
            strict.verdict.reason
                == "signature 0 names the algorithm 'ECDSA p-256 SHA-256', not an OID Google accepts (1.2.840.10045.4.3.2 ECDSA with SHA-256, 1.2.840.10045.4.3.4 with SHA-512)"
        )
        #expect(strict.export.keys.count == 110)
        #expect(strict.export.keys.count { $0.key.rollingPeriod == 144 } == 1)  // the one without the field
        // Lenient mode accepts the algorithm name and verifies with the only trusted key.
        let lenient = try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [key], lenient: true))
        #expect(lenient.verdict.isVerified)
    }

    @Test func theSampleExportOfTheServerHasAKeyIDWithoutVersion() throws {
        let key = try Samples.key("google-ens-sample-export-public.pem", id: "ExampleServer_k1", version: "")
        let file = try KeyFile(zip: Samples.fixture("google-ens-sample-export.zip"), policy: SignaturePolicy(trustedKeys: [key]))
        #expect(file.verdict == .verified(keyID: "ExampleServer_k1", keyVersion: ""))
        #expect(file.export.keys.count == 2)
        #expect(file.export.keys.allSatisfy { $0.key.rollingPeriod == 144 })
    }

    @Test func theUnsignedServerFileHasNegativeDaysSinceOnset() throws {
        let file = try KeyFile(zip: Samples.fixture("google-ens-1605818700-1605819000-0001-ff23e2-unsigned.zip"), policy: SignaturePolicy(trustedKeys: []))
        #expect(file.verdict == .unsigned)
        #expect(file.export.keys.count == 50)
        // sint32, zigzag: −1 must not read as 1.
        let days = file.export.keys.compactMap(\.daysSinceOnsetOfSymptoms)
        #expect(days.count == 50)
        #expect(days.count { $0 == -1 } == 6)
        #expect(days.min() == -11)
        #expect(days.max() == 10)
        #expect(file.export.keys.count { $0.reportType == .confirmedTest } == 13)
        #expect(file.export.keys.count { $0.reportType == .confirmedClinicalDiagnosis } == 37)
        let first = try #require(file.export.keys.first)
        #expect(first.key.keyData.hex == "e0fa5d183b8557b8589bb1ca21c2682b")
        #expect(first.daysSinceOnsetOfSymptoms == 10)
        #expect(first.key.rollingPeriod == 144)
    }

    @Test func theBareExportBinOfTheInternalsParses() throws {
        let file = try KeyFile(exportBinary: Samples.fixture("google-en-internals-cpp-testdata-export.bin"))
        #expect(file.verdict == .unsigned)
        #expect(file.export.keys.count == 200)
        #expect(file.export.keys.count { $0.key.rollingPeriod == 144 } == 2)
        #expect(file.export.dropped.isEmpty)
    }

    @Test func theCoronaWarnAppTestFileVerifiesWithTheDevelopmentKeyOnly() throws {
        let bytes = try Samples.fixture("cwa-android-test-keys.bin.zip")
        let development = try Samples.key("cwa-dev-public.pem", id: "262", version: "v1")
        let production = try Samples.key("cwa-prod-public.pem", id: "262", version: "v1")
        let file = try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [development]))
        #expect(file.verdict == .verified(keyID: "262", keyVersion: "v1"))
        #expect(file.export.region == "DE")
        #expect(file.export.keys.count == 24_131)
        #expect(try KeyFile(zip: bytes, policy: SignaturePolicy(trustedKeys: [production])).verdict.name == "bad-signature")
    }
}

/// The samples of EUPL/AGPL projects, read from ../shared when it is there.
@Suite(.ownThreads, .enabled(if: Samples.sharedDirectory != nil, "../shared/keyfiles is absent: the EUPL/AGPL samples are not in the project"))
struct SharedSampleFileTests {
    @Test func theFinnishTestKeyIsOnTheWrongCurveAndRefused() throws {
        let error = try #require(throws: CryptoError.self) { try Samples.key("fi-test-secp256k1-public.pem", id: "244", version: "v1", shared: true) }
        #expect(error.reason.contains("secp256k1"))
        for (name, keys) in [("fi-batch_test.zip", 1), ("fi-batch_test_2.zip", 2), ("fi-batch_test_invalid_key.zip", 3)] {
            let file = try KeyFile(zip: Samples.shared(name), policy: SignaturePolicy(trustedKeys: []))
            #expect(file.verdict.name == "unknown-key", "\(name)")
            #expect(file.export.region == "FI")
            #expect(file.export.keys.count == keys)
        }
    }

    @Test func immuniFilesAreInvalidOrRefusedWithReasons() throws {
        // Signatures naming no trusted key are skipped unjudged: without Immuni's key the files are
        // merely unknown-key. Trusting a key by their id 'key' (its bytes are not published: the
        // CWA key stands in) makes the algorithm name count.
        let stand = try Samples.key("cwa-dev-public.pem", id: "key", version: "v1")
        let empty = try KeyFile(zip: Samples.shared("immuni-test-empty.zip"), policy: SignaturePolicy(trustedKeys: []))
        #expect(empty.verdict.name == "unknown-key")
        #expect(empty.export.keys.isEmpty)
        let named = try KeyFile(zip: Samples.shared("immuni-test-empty.zip"), policy: SignaturePolicy(trustedKeys: [stand]))
        #expect(named.verdict.name == "invalid")
        #expect(named.verdict.reason?.contains("'ecdsa-with-SHA256', not an OID Google accepts") == true)

        let raw = try KeyFile(zip: Samples.shared("immuni-test-legit-rawsig.zip"), policy: SignaturePolicy(trustedKeys: [stand]))
        #expect(raw.verdict.name == "invalid")
        #expect(raw.export.keys.count == 1)
        #expect(raw.export.dropped.count == 500)
        #expect(raw.export.dropped.allSatisfy { $0.reason == "key_data is 96 bytes, not 16" })
        // Lenient: the algorithm name passes, the raw signature is converted, and the stand-in key
        // does not verify it; with no key trusted it is unknown.
        let lenient = try KeyFile(zip: Samples.shared("immuni-test-legit-rawsig.zip"), policy: SignaturePolicy(trustedKeys: [stand], lenient: true))
        #expect(lenient.verdict.name == "bad-signature")
        let unknown = try KeyFile(zip: Samples.shared("immuni-test-legit-rawsig.zip"), policy: SignaturePolicy(trustedKeys: [], lenient: true))
        #expect(unknown.verdict.name == "unknown-key")

        // Zipped with their folder (and macOS's __MACOSX): the first entry, the folder, is refused.
        for (name, folder, files) in [
            ("immuni-test-corrupt.zip", "corrupt/", "corrupt/export.bin, corrupt/export.sig"),
            ("immuni-test-wrong_filename.zip", "wrong_filename/", "wrong_filename/export.sig"),
        ] {
            let refusal = "entry '\(folder)' is neither export.bin nor export.sig (GMS refuses such archives); the export files are in a sub-folder: \(files)"
            #expect(throws: KeyFileError.archive(refusal), "\(name)") {
                try KeyFile(zip: Samples.shared(name), policy: SignaturePolicy(trustedKeys: []))
            }
        }
    }

    /// The Dutch server's archives carry its app's CMS signature, `content.sig`, beside the export
    /// pair; gaend, app and framework in one, passes over it as the Dutch app strips it, and judges
    /// the pair on export.sig (docs/key-files.md).
    @Test func dutchFilesAreJudgedOnTheirExportSignature() throws {
        let key = try Samples.key("nl-TestECDSA-public.pem", id: "204", version: "v1", shared: true)
        let policy = SignaturePolicy(trustedKeys: [key])
        let header = try KeyFile(zip: Samples.shared("nl-ProtobufHeaderTestFile.zip"), policy: policy)
        #expect(header.verdict == .verified(keyID: "204", keyVersion: "v1"))
        #expect(header.ignoredEntries == ["content.sig"])
        #expect(header.export.keys.isEmpty)
        #expect(header.export.dropped.map(\.reason) == ["key_data is 53 bytes, not 16"])

        let v13 = try KeyFile(zip: Samples.shared("nl-eks-test-v13.zip"), policy: policy)
        #expect(v13.verdict.name == "unknown-key")
        #expect(v13.verdict.reason?.contains("'204' version 'v13'") == true)
        #expect(v13.ignoredEntries == ["content.sig"])
        #expect(v13.export.keys.count == 150)

        let v2t = try KeyFile(zip: Samples.shared("nl-eks-test-v2t.zip"), policy: policy)
        #expect(v2t.verdict.name == "unknown-key")
        #expect(v2t.ignoredEntries == ["content.sig"])
        #expect(v2t.export.keys.isEmpty)
        #expect(v2t.export.dropped.count == 2)

        // The pair alone, without content.sig, gets the same verdict: the extra entry decides nothing.
        let pair = try Samples.pair(Samples.shared("nl-ProtobufHeaderTestFile.zip"))
        #expect(
            policy.verdict(exportBinary: pair.binary, exportSignature: pair.signature, export: pair.export) == .verified(keyID: "204", keyVersion: "v1"))
    }
}
