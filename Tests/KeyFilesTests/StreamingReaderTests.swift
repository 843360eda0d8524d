// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import GaendTestSupport
import KeyFiles
import Testing

/// Hand-made export.bin bodies: what a hostile or broken server could send.
enum HostileExport {
    static func varint(_ value: UInt64) -> [UInt8] { ExportBinary.varint(value) }

    static func field(_ number: Int, _ payload: [UInt8]) -> [UInt8] { [UInt8(number << 3 | 2)] + varint(UInt64(payload.count)) + payload }

    /// Batch 1 of 1 and one signature info naming key 310 v1.
    static let headerFields: [UInt8] = {
        let info = field(3, Array("v1".utf8)) + field(4, Array("310".utf8)) + field(5, Array(SignatureInfo.ecdsaP256SHA256.utf8))
        return field(3, Array("US".utf8)) + [0x20, 1, 0x28, 1] + field(6, info)
    }()

    static func key(_ key: DiagnosisKey) -> [UInt8] {
        var body = field(1, key.key.keyData.bytes)
        body += [0x10] + varint(UInt64(key.transmissionRiskLevel))
        body += [0x18] + varint(UInt64(key.key.rollingStartIntervalNumber.rawValue))
        if key.key.rollingPeriod != 144 { body += [0x20] + varint(UInt64(key.key.rollingPeriod)) }
        body += [0x28] + varint(UInt64(key.reportType.rawValue))
        if let days = key.daysSinceOnsetOfSymptoms { body += [0x30] + varint(UInt64(UInt32(bitPattern: (days << 1) ^ (days >> 31)))) }
        return field(7, body)
    }

    /// Random bytes in an unknown field (15): they keep an archive under the compression ratio.
    static func padding(_ count: Int, seed: UInt64 = 3) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return field(15, (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    /// A signed archive of `body` (after the header), signed by `signer`.
    static func archive(_ body: [UInt8], signer: KeyFileWriter, signature: [UInt8]? = nil) throws -> [UInt8] {
        let binary = ExportBinary.header + body
        return KeyFileWriter.zip([("export.bin", binary), ("export.sig", try signature ?? signer.exportSignature(for: binary))])
    }
}

@Suite(.ownThreads) struct StreamingReaderTests {
    let signing: ECDSAPrivateKey
    let writer: KeyFileWriter
    let policy: SignaturePolicy

    init() throws {
        signing = try ECDSAPrivateKey()
        writer = KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1")
        policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
    }

    /// The file, smaller: millions of empty key messages that deflate to nothing, and random
    /// bytes to keep the ratio under 20. Decoded whole, each was a message object (31 M of them
    /// cost 2.5 GB); read as a stream, the 750,001st stops the reading.
    @Test func emptyKeyMessagesStopAtTheLimitUnderTheArchiveLimits() throws {
        let body =
            HostileExport.headerFields + [UInt8](repeatElement([UInt8(0x3A), 0], count: 2_000_000).joined())
            + HostileExport.padding(300_000)
        let zip = try HostileExport.archive(body, signer: writer)
        #expect(zip.count < KeyFileLimits.maximumArchiveBytes)
        #expect(UInt64(body.count) / UInt64(zip.count) < KeyFileLimits.maximumCompressionRatio)
        let expected = KeyFileError.tooManyKeys(KeyFileLimits.maximumKeys + 1)
        #expect(throws: expected) { try JudgedKeyFile(zip: zip, policy: policy) }
        #expect(throws: expected) { try KeyFile(zip: zip, policy: policy) }
        #expect("\(expected)" == "key 750001 is over the limit of 750000 keys (keys and revised keys, counted as read)")
        // Revised keys count towards the same limit.
        let mixed = [UInt8](repeatElement([UInt8(0x42), 0], count: 400_000).joined()) + [UInt8](repeatElement([UInt8(0x3A), 0], count: 400_000).joined())
        #expect(throws: expected) { try ExportSummary(reading: ExportInput(ExportBinary.header + mixed)) }
    }

    /// 750,000 keys, all invalid: the file is read, every drop counted, a thousand reasons kept.
    @Test func aFileAtTheLimitParsesAndItsDropsAreBounded() throws {
        let body =
            HostileExport.headerFields + [UInt8](repeatElement([UInt8(0x3A), 0], count: KeyFileLimits.maximumKeys).joined())
            + HostileExport.padding(100_000)
        let file = try KeyFile(zip: try HostileExport.archive(body, signer: writer), policy: policy)
        #expect(file.verdict.isVerified)
        #expect(file.export.keys.isEmpty)
        #expect(file.export.droppedCount == KeyFileLimits.maximumKeys)
        #expect(file.export.dropped.count == KeyFileLimits.maximumDroppedReasons)
        #expect(file.export.dropped.last?.description == "key 999: key_data is 0 bytes, not 16")
        let summary = try ExportSummary(reading: ExportInput(ExportBinary.header + body))
        #expect(summary.keyMessages == KeyFileLimits.maximumKeys)
        #expect(try summary.check() == (keys: 0, revisedKeys: 0, dropped: KeyFileLimits.maximumKeys))
    }

    /// The verdict comes from the header and the raw bytes: a file whose keys cannot even be
    /// decoded is judged all the same, and the fault is met only by the check and by a reader of
    /// its keys.
    @Test func theSignatureIsJudgedBeforeAnyKeyIsRead() throws {
        let good = HostileExport.key(
            DiagnosisKey(key: try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_700_000))))
        // A key whose body is a varint cut short: undecodable.
        let body = HostileExport.headerFields + good + [0x3A, 0x02, 0x10, 0xFF]
        let other = KeyFileWriter(signingKey: try ECDSAPrivateKey(), keyID: "310", keyVersion: "v1")
        let forged = try JudgedKeyFile(zip: try HostileExport.archive(body, signer: other), policy: policy)
        #expect(forged.verdict.name == "bad-signature")
        #expect(forged.header.region == "US" && forged.header.signatureInfos.count == 1)
        #expect(forged.keyMessages == 2)
        let signed = try JudgedKeyFile(zip: try HostileExport.archive(body, signer: writer), policy: policy)
        #expect(signed.verdict.isVerified)
        #expect(throws: KeyFileError.malformed("export.bin: key 1: malformed protobuf")) { try signed.check() }
        let keys = try signed.keys()
        #expect(try keys.next() != nil)
        #expect(throws: KeyFileError.malformed("export.bin: key 1: malformed protobuf")) { try keys.next() }
        // The tools' whole read meets it too.
        #expect(throws: KeyFileError.malformed("export.bin: key 1: malformed protobuf")) {
            try KeyFile(zip: try HostileExport.archive(body, signer: writer), policy: policy)
        }
    }

    /// Keys stream in the file's order, revised keys apart, with the rules of the whole parse.
    @Test func keysStreamInTheFilesOrderAndRevisedKeysApart() throws {
        let keys = WriterTests.keys(300)
        var body = HostileExport.headerFields
        for (index, key) in keys.enumerated() {
            body += HostileExport.key(key)
            if index % 100 == 0 { body += [0x42] + HostileExport.key(keys[index]).dropFirst() }  // the same key in revised_keys
        }
        let summary = try ExportSummary(reading: ExportInput(ExportBinary.header + body))
        #expect(summary.keyMessages == 300 && summary.revisedKeyMessages == 3)
        let stream = KeyStream(ExportInput(ExportBinary.header + body))
        var read = [DiagnosisKey]()
        while let key = try stream.next() { read.append(key) }
        #expect(
            read
                == keys.map { key in
                    var clamped = key
                    clamped.transmissionRiskLevel = min(key.transmissionRiskLevel, 8)
                    return clamped
                })
        let revised = KeyStream(ExportInput(ExportBinary.header + body), revised: true)
        var revisedRead = [DiagnosisKey]()
        while let key = try revised.next() { revisedRead.append(key) }
        #expect(revisedRead == [read[0], read[100], read[200]])
        let export = try ExportBinary.parse(ExportBinary.header + body)
        #expect(export.keys == read && export.revisedKeys == revisedRead)
    }

    /// Header fields that would cost more than their bytes are refused: signature infos, long
    /// strings, and an export.sig beyond its own limit.
    @Test func headerFieldsAndExportSigAreBounded() throws {
        let infos = [UInt8](repeatElement([UInt8(0x32), 0], count: KeyFileLimits.maximumSignatureInfos + 1).joined())
        #expect(throws: KeyFileError.malformed("export.bin: more than 100 signature infos, over the limit")) {
            try ExportSummary(reading: ExportInput(ExportBinary.header + infos))
        }
        #expect(
            try ExportSummary(reading: ExportInput(ExportBinary.header + infos.dropLast(2))).header.signatureInfos.count == KeyFileLimits.maximumSignatureInfos)
        let region = HostileExport.field(3, [UInt8](repeating: 0x41, count: KeyFileLimits.maximumHeaderStringBytes + 1))
        #expect(throws: KeyFileError.malformed("export.bin: region is 1025 bytes, over the limit of 1024")) {
            try ExportSummary(reading: ExportInput(ExportBinary.header + region))
        }
        let signatures = [UInt8](repeatElement([UInt8(0x0A), 0], count: 40_000).joined())
        let zip = try HostileExport.archive(HostileExport.headerFields, signer: writer, signature: signatures)
        #expect(throws: KeyFileError.archive("export.sig inflates past the 65536-byte limit")) { try KeyFileArchive(zip: zip) }
    }
}
