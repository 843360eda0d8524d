// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import KeyServer
import Testing

/// A batch larger than a file may hold is split as the reference splits one (internal/export:
/// worker.go's groups, exportfile.go's end timestamps), and its keys stream from the database a
/// page at a time: what the export holds at once is one page, whatever the batch's size.
@Suite(.postgreSQLServer) struct ExportSplitTests {
    static let now = PublishValidatorTests.now

    @Test(arguments: Engine.available)
    func aLargeBatchIsSplitAndReadAPageAtATime(_ engine: Engine) async throws {
        let (database, store, signing) = try ExportWorkerTests.storage(engine)
        var settings = ExportWorkerTests.settings(database)
        settings.maximumKeysPerFile = 10
        settings.page = 4
        let worker = ExportWorker(store: store, signingKey: signing, settings: settings)
        let read = try Self.reader(settings, signing)
        // 23 keys, published in an order their bytes do not have.
        let bytes = (0..<23).map { UInt8(($0 * 7) % 23 + 1) }
        let published = try await store.publish(
            try bytes.map { try KeyStoreTests.accepted(Array(repeating: $0, count: 16)) }, reportType: 2, healthAuthority: "x", traveler: false,
            revisionToken: nil, now: Self.now)

        let run = try await worker.run(now: Self.now)
        let start = Self.now.seconds - 86_400
        #expect(run.files == (1...3).map { "exposureKeyExport-CH/\(start)-\(Self.now.seconds)-0000\($0).zip" })
        let files = try run.files.map(read)
        #expect(files.map(\.export.keys.count) == [10, 10, 3])
        // One order across the files, every key once.
        let order = files.flatMap(\.export.keys).map(\.key.keyData.bytes)
        #expect(order == (1...23).map { Array(repeating: UInt8($0), count: 16) })
        // Each file 1 of 1, its end the batch's plus its number, so Android takes every one.
        #expect(files.map(\.export.endTimestamp) == (1...3).map { UInt64(Self.now.seconds) + UInt64($0) })
        #expect(files.allSatisfy { $0.export.startTimestamp == UInt64(start) && $0.export.batchNumber == 1 && $0.export.batchSize == 1 })
        // Never more than a page of keys read at once; every page read.
        #expect(run.largestRead == 4)
        #expect(run.reads >= 6)
        #expect(run.keys == 23)
        let index = try String(contentsOfFile: settings.directory! + "/exposureKeyExport-CH/index.txt", encoding: .utf8)
        #expect(index == run.files.joined(separator: "\n"))
        // Every key was marked with its file: the next run has nothing.
        #expect(try await worker.run(now: Self.now.adding(seconds: 600)).files.isEmpty)

        // Twelve revisions: two files of revised keys, split alike.
        _ = try await store.publish(
            try bytes.prefix(12).map { try KeyStoreTests.accepted(Array(repeating: $0, count: 16)) }, reportType: 1, healthAuthority: "x",
            traveler: false, revisionToken: published.revisionToken, now: Self.now)
        let revisions = try await worker.run(now: Self.now.adding(seconds: 1200))
        let revised = try revisions.files.map(read)
        #expect(revised.map(\.export.revisedKeys.count) == [10, 2])
        #expect(revised.allSatisfy { $0.export.keys.isEmpty })
        #expect(revised.flatMap(\.export.revisedKeys).map(\.key.keyData.bytes[0]) == bytes.prefix(12).sorted())
    }

    /// Padding joins the keys in their order and counts toward the split.
    @Test(arguments: Engine.available)
    func paddingIsMergedIntoTheOrderAndSplitToo(_ engine: Engine) async throws {
        let (database, store, signing) = try ExportWorkerTests.storage(engine)
        var settings = ExportWorkerTests.settings(database)
        settings.maximumKeysPerFile = 4
        settings.page = 2
        settings.minimumRecords = 9
        let worker = ExportWorker(store: store, signingKey: signing, settings: settings)
        let read = try Self.reader(settings, signing)
        _ = try await store.publish(
            try [0x80, 0x10, 0xF0].map { try KeyStoreTests.accepted(Array(repeating: $0, count: 16)) }, reportType: 1, healthAuthority: "x",
            traveler: false, revisionToken: nil, now: Self.now)
        let run = try await worker.run(now: Self.now)
        let files = try run.files.map(read)
        #expect(files.map(\.export.keys.count) == [4, 4, 1])
        let order = files.flatMap(\.export.keys).map(\.key.keyData.bytes)
        #expect(order == order.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(Set([0x80, 0x10, 0xF0].map { Array(repeating: UInt8($0), count: 16) }).isSubset(of: Set(order)))
    }

    /// Reads an export file of `settings`' directory, trusting `signing`.
    static func reader(_ settings: ExportWorker.Settings, _ signing: ECDSAPrivateKey) throws -> (String) throws -> KeyFile {
        let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
        return { name in try KeyFile(zip: Array(try Data(contentsOf: URL(fileURLWithPath: settings.directory! + "/" + name))), policy: policy) }
    }
}
