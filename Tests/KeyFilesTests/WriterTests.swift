// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCore
import ENCrypto
import Foundation
import KeyFiles
import Testing

@Suite(.ownThreads) struct WriterTests {
    static func keys(_ count: Int, seed: UInt64 = 5) -> [DiagnosisKey] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { index in
            let period = UInt32(index % 144 + 1)
            return DiagnosisKey(
                key: try! TemporaryExposureKey(
                    keyData: Bytes16(words: (generator.next(), generator.next())),
                    rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_700_000 + UInt32(index % 14) * 144), rollingPeriod: period),
                transmissionRiskLevel: Int32(index % 9), reportType: ReportType(rawValue: Int32(index % 6))!,
                daysSinceOnsetOfSymptoms: index % 3 == 0 ? nil : Int32(index % 29) - 14)
        }
    }

    @Test func aWrittenFileReadsBackVerifiedWithTheSameKeys() throws {
        let signing = try ECDSAPrivateKey()
        let writer = KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1")
        let keys = Self.keys(500)
        let revised = Self.keys(3, seed: 9)
        let export = KeyExport(startTimestamp: 1_700_000_000, endTimestamp: 1_700_003_600, region: "US", keys: keys, revisedKeys: revised)
        let zip = try writer.archive(export)
        let trusted = try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)
        let file = try KeyFile(zip: zip, policy: SignaturePolicy(trustedKeys: [trusted]))
        #expect(file.verdict == .verified(keyID: "310", keyVersion: "v1"))
        #expect(Set(file.export.keys) == Set(keys))
        #expect(Set(file.export.revisedKeys) == Set(revised))
        #expect(file.export.dropped.isEmpty)
        #expect(file.export.region == "US")
        #expect(file.export.startTimestamp == 1_700_000_000 && file.export.endTimestamp == 1_700_003_600)
        // Sorted by key bytes, not in upload order.
        let order = file.export.keys.map(\.key.keyData.bytes)
        #expect(order == order.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test func theLayoutIsTheReferenceServers() throws {
        let writer = KeyFileWriter(signingKey: try ECDSAPrivateKey(), keyID: "310", keyVersion: "v1")
        let zip = try writer.archive(KeyExport(region: "US", keys: Self.keys(2)))
        // Entries in order, export.bin first.
        let archive = try KeyFileArchive(zip: zip)
        #expect(Array(archive.exportBinary.prefix(16)) == Array("EK Export v1    ".utf8))
        // A 144-period key carries no rolling_period field: proto2's default stands for it.
        let full = DiagnosisKey(key: try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_700_000)))
        let binary = writer.exportBinary(KeyExport(keys: [full]))
        let withShortPeriod = writer.exportBinary(
            KeyExport(keys: [
                DiagnosisKey(
                    key: try TemporaryExposureKey(keyData: .zero, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_700_000), rollingPeriod: 100))
            ]))
        #expect(withShortPeriod.count == binary.count + 2)  // tag 0x20 and one varint byte
        #expect(try ExportBinary.parse(binary).keys.first?.key.rollingPeriod == 144)
        // The signature is DER and covers the header: openssl agrees (checked in the CLI tests).
        let signature = try writer.exportSignature(for: binary)
        #expect(!signature.isEmpty)
    }

    @Test func invalidKeysAreDroppedOneByOneNeverFatal() throws {
        // Hand-made protobuf: keys with a short key, period 0, period 145, TRL 9, DSOS 15, no start.
        // TRL 9 and DSOS 15 are kept, as Google keeps them (KeyMetadataTests).
        func field(_ number: Int, _ wire: Int, _ payload: [UInt8]) -> [UInt8] { [UInt8(number << 3 | wire)] + payload }
        func varint(_ value: UInt64) -> [UInt8] { ExportBinary.varint(value) }
        func key(data: Int = 16, start: Int? = 2_700_000, period: Int? = nil, risk: Int = 0, dsos: Int? = nil) -> [UInt8] {
            var body = field(1, 2, varint(UInt64(data)) + [UInt8](repeating: 7, count: data))
            body += field(2, 0, varint(UInt64(risk)))
            if let start { body += field(3, 0, varint(UInt64(start))) }
            if let period { body += field(4, 0, varint(UInt64(period))) }
            if let dsos { body += field(6, 0, varint(UInt64(bitPattern: Int64((dsos << 1) ^ (dsos >> 63))))) }
            return field(7, 2, varint(UInt64(body.count)) + body)
        }
        var body = [UInt8]()
        body += key()
        body += key(data: 15)
        body += key(period: 0)
        body += key(period: 145)
        body += key(risk: 9)
        body += key(dsos: 15)
        body += key(dsos: -14)
        body += key(start: nil)
        let export = try ExportBinary.parse(ExportBinary.header + body)
        #expect(export.keys.count == 4)
        #expect(export.keys[1].transmissionRiskLevel == 8)
        #expect(export.keys[2].daysSinceOnsetOfSymptoms == 15)
        #expect(export.keys[3].daysSinceOnsetOfSymptoms == -14)
        #expect(export.dropped.map(\.index) == [1, 2, 3, 7])
        #expect(
            export.dropped.map(\.reason) == [
                "key_data is 15 bytes, not 16", "rolling_period 0 is outside 1...144", "rolling_period 145 is outside 1...144",
                "rolling_start_interval_number is missing or 0",
            ])
    }

    @Test func malformedExportsAreTypedErrors() throws {
        #expect(throws: KeyFileError.badHeader) { try ExportBinary.parse(Array("EK Export v1   ".utf8)) }
        #expect(throws: KeyFileError.badHeader) { try ExportBinary.parse(Array("EK Export v1\0\0\0\0".utf8)) }
        let truncated = ExportBinary.header + [0x3A, 0x10, 0x0A]  // a key field that claims 16 bytes and ends
        #expect(throws: KeyFileError.self) { try ExportBinary.parse(truncated) }
    }
}

@Suite(.ownThreads) struct ArchiveLimitTests {
    let binary = ExportBinary.header

    @Test func bothEntriesAreRequiredAtTheRootOnce() throws {
        #expect(throws: KeyFileError.archive("no export.sig at the root")) {
            try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary)]))
        }
        #expect(throws: KeyFileError.archive("two export.bin entries")) {
            try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary), ("export.bin", binary), ("export.sig", [])]))
        }
        #expect(throws: KeyFileError.archive("entry 'keys.txt' is neither export.bin nor export.sig (GMS refuses such archives)")) {
            try KeyFileArchive(zip: KeyFileWriter.zip([("export.bin", binary), ("export.sig", []), ("keys.txt", [1])]))
        }
        #expect(throws: KeyFileError.self) { try KeyFileArchive(zip: Array("PK not really".utf8)) }
    }

    @Test func oversizedArchivesAndZipBombsAreRefused() throws {
        let big = [UInt8](repeating: 0, count: KeyFileLimits.maximumArchiveBytes + 1)
        #expect(throws: KeyFileError.archive("\(big.count) bytes, over the \(KeyFileLimits.maximumArchiveBytes)-byte limit")) {
            try KeyFileArchive(zip: big)
        }
        // 40 MB of zeros deflate to a few tens of kilobytes: refused long before it is all inflated.
        let bomb = KeyFileWriter.zip([("export.bin", binary + [UInt8](repeating: 0, count: 40 << 20)), ("export.sig", [])])
        #expect(bomb.count < 200_000)
        let error = try #require(throws: KeyFileError.self) { try KeyFileArchive(zip: bomb) }
        #expect("\(error)".contains("zip bomb"))
    }

    @Test func tooManyKeysIsFatal() throws {
        // 750,001 minimal keys (two bytes each: an empty key field) parse quickly and break the limit.
        let body = [UInt8]((0..<(KeyFileLimits.maximumKeys + 1)).lazy.flatMap { _ in [UInt8(0x3A), 0x00] })
        #expect(throws: KeyFileError.tooManyKeys(KeyFileLimits.maximumKeys + 1)) { try ExportBinary.parse(ExportBinary.header + body) }
    }
}
