// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import KeyServer
import Testing

/// Published keys become signed files and an index in the reference layout, embargo and
/// retention included; what gaend's reader makes of them is the test.
@Suite(.postgreSQLServer) struct ExportWorkerTests {
    static let now = PublishValidatorTests.now
    static let today: Int64 = PublishValidatorTests.today

    @Test(arguments: Engine.available)
    func embargoRevisionAndRetention(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let directory = database.directory
        let store = try KeyStore(database.keys)
        let signing = try ECDSAPrivateKey()
        var settings = ExportWorker.Settings(directory: directory.path + "/exports", root: "exposureKeyExport-CH", region: "CH", keyID: "310", keyVersion: "v1")
        settings.minimumRecords = 10
        let worker = ExportWorker(store: store, signingKey: signing, settings: settings)
        let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
        func read(_ name: String) throws -> KeyFile {
            try KeyFile(zip: Array(try Data(contentsOf: URL(fileURLWithPath: settings.directory! + "/" + name))), policy: policy)
        }
        func index() throws -> String { try String(contentsOfFile: settings.directory! + "/exposureKeyExport-CH/index.txt", encoding: .utf8) }

        // Yesterday's key (likely) and today's (embargoed until tomorrow 02:00).
        let request = try PublishValidatorTests.request([
            PublishValidatorTests.key(1, start: Self.today - 144), PublishValidatorTests.key(2, start: Self.today),
        ])
        let outcome = try PublishValidator().validate(request, now: Self.now)
        let published = try await store.publish(
            outcome.accepted, reportType: 2, healthAuthority: "ch.example", traveler: false, revisionToken: nil, now: Self.now)

        // Issue 53: nothing is out before two hours have passed since the publication, even the
        // key that ended yesterday (under an injected clock: the run's time).
        #expect(try await worker.run(now: Self.now).files.first == nil)
        #expect(try await worker.run(now: Self.now.adding(seconds: 7199)).files.first == nil)
        let firstTime = Self.now.adding(seconds: 7200)
        let first = try #require(try await worker.run(now: firstTime).files.first)
        #expect(first == "exposureKeyExport-CH/\(firstTime.seconds - 86_400)-\(firstTime.seconds)-00001.zip")
        let firstFile = try read(first)
        #expect(firstFile.verdict.isVerified)
        #expect(firstFile.export.region == "CH")
        #expect(firstFile.export.keys.count == 10)  // one real key, nine of padding
        #expect(firstFile.export.keys.contains { $0.key.keyData.bytes == Array(repeating: 1, count: 16) && $0.reportType == .confirmedClinicalDiagnosis })
        #expect(!firstFile.export.keys.contains { $0.key.keyData.bytes == Array(repeating: 2, count: 16) })
        #expect(try index() == first)
        // Nothing new: no file.
        #expect(try await worker.run(now: firstTime.adding(seconds: 600)).files.first == nil)

        // The likely key confirmed: a revised key in the next file, with the embargoed one once its time came.
        let revision = try PublishValidator().validate(
            try PublishValidatorTests.request([PublishValidatorTests.key(1, start: Self.today - 144)]), now: Self.now)
        _ = try await store.publish(
            revision.accepted, reportType: 1, healthAuthority: "ch.example", traveler: false, revisionToken: published.revisionToken, now: Self.now)
        let later = Self.now.adding(seconds: 15 * 3600)
        let second = try #require(try await worker.run(now: later).files.first)
        let secondFile = try read(second)
        #expect(secondFile.export.keys.contains { $0.key.keyData.bytes == Array(repeating: 2, count: 16) })
        #expect(secondFile.export.revisedKeys.map(\.key.keyData.bytes) == [Array(repeating: 1, count: 16)])
        #expect(secondFile.export.revisedKeys.first?.reportType == .confirmedTest)
        #expect(secondFile.export.startTimestamp == UInt64(firstTime.seconds))
        #expect(try index() == first + "\n" + second)

        // Fifteen days on, both files are past the retention: gone from the index and the disk.
        _ = try await worker.run(now: later.adding(seconds: 15 * 86_400)).files.first
        #expect(try index() == "")
        #expect(!FileManager.default.fileExists(atPath: settings.directory! + "/" + first))
    }

    /// More keys than one marking statement takes (500): every key is in the file once and marked,
    /// so the next run finds nothing.
    @Test(arguments: Engine.available)
    func aBatchLargerThanOneStatementIsMarkedWhole(_ engine: Engine) async throws {
        let (database, store, signing) = try Self.storage(engine)
        let settings = Self.settings(database)
        let worker = ExportWorker(store: store, signingKey: signing, settings: settings)
        var expected = Set<[UInt8]>()
        for publish in 0..<41 {  // 41 × 30 = 1,230 keys
            let keys = try (0..<30).map { index in
                let bytes = [UInt8(publish), UInt8(index)] + Array(repeating: 7, count: 14)
                expected.insert(bytes)
                return try KeyStoreTests.accepted(bytes)
            }
            _ = try await store.publish(keys, reportType: 1, healthAuthority: "ch.example", traveler: false, revisionToken: nil, now: Self.now)
        }
        let name = try #require(try await worker.run(now: Self.now).files.first)
        let file = try KeyFile(
            zip: Array(try Data(contentsOf: URL(fileURLWithPath: settings.directory! + "/" + name))),
            policy: SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)]))
        #expect(file.export.keys.count == 1230)
        #expect(Set(file.export.keys.map(\.key.keyData.bytes)) == expected)
        #expect(try await worker.run(now: Self.now.adding(seconds: 600)).files.first == nil)
    }
}

extension ExportWorkerTests {
    static func storage(_ engine: Engine) throws -> (TestDatabase, KeyStore, ECDSAPrivateKey) {
        let database = try TestDatabase(engine)
        return (database, try KeyStore(database.keys), try ECDSAPrivateKey())
    }

    static func settings(_ database: TestDatabase) -> ExportWorker.Settings {
        ExportWorker.Settings(directory: database.directory.path + "/exports", root: "exposureKeyExport-CH", region: "CH", keyID: "310", keyVersion: "v1")
    }

    /// Padding keys copy the real keys' interval, period, risk, report type and days since onset
    /// (the reference's ensureMinNumExposures), up to the minimum plus a random part of the range;
    /// a file without keys gets none.
    @Test(arguments: Engine.available)
    func paddingLooksLikeTheRealKeysAndNeverFillsAnEmptyFile(_ engine: Engine) async throws {
        let (database, store, signing) = try Self.storage(engine)
        var settings = Self.settings(database)
        settings.minimumRecords = 20
        settings.paddingRange = 5
        let worker = ExportWorker(store: store, signingKey: signing, settings: settings)
        func read(_ name: String) throws -> KeyFile {
            try KeyFile(
                zip: Array(try Data(contentsOf: URL(fileURLWithPath: settings.directory! + "/" + name))),
                policy: SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)]))
        }
        var real = try KeyStoreTests.accepted(Array(repeating: 1, count: 16))
        real.transmissionRisk = 7
        real.daysSinceOnsetOfSymptoms = -2
        let published = try await store.publish([real], reportType: 2, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
        let file = try read(try #require(try await worker.run(now: Self.now).files.first))
        #expect((20...25).contains(file.export.keys.count))
        for key in file.export.keys {
            #expect(key.key.rollingStartIntervalNumber == real.key.rollingStartIntervalNumber && key.key.rollingPeriod == real.key.rollingPeriod)
            #expect(key.transmissionRiskLevel == 7 && key.reportType == .confirmedClinicalDiagnosis && key.daysSinceOnsetOfSymptoms == -2)
        }
        #expect(Set(file.export.keys.map(\.key.keyData)).count == file.export.keys.count)

        // Only a revision: the file holds it and no padding.
        _ = try await store.publish([real], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: published.revisionToken, now: Self.now)
        let revision = try read(try #require(try await worker.run(now: Self.now.adding(seconds: 600)).files.first))
        #expect(revision.export.keys.isEmpty)
        #expect(revision.export.revisedKeys.count == 1)
    }
}
