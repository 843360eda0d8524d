// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeyServer
import Testing

/// `ExportFiles` on SQLite: files from the database, files of older batches from the directory,
/// and a cache bounded in bytes.
@Suite struct ExportFilesTests {
    static let now = PublishValidatorTests.now

    /// Records a batch named `name` whose file is `bytes` (in the database, or left out of it).
    static func record(_ store: KeyStore, _ name: String, bytes: [UInt8], at seconds: Int64) async throws {
        _ = try await store.publish(
            [try PostgreSQLTests.ReplicaPublishTests.key(UInt8(truncatingIfNeeded: seconds), 1)], reportType: 1, healthAuthority: "x", traveler: false,
            revisionToken: nil, now: now)
        #expect(try await OneFileExport.export(store, now: now.adding(seconds: seconds), bytes: bytes) { _ in name }.name == name)
    }

    /// A store upgraded from before files were kept: a batch without an `export_file` row is read
    /// from the directory; the index still comes from the batches.
    @Test func aBatchFromBeforeTheDatabaseHeldFilesIsReadFromTheDirectory() async throws {
        let directory = try TemporaryDirectory()
        let location = DatabaseLocation.sqlite(path: directory.path + "/keys.sqlite")
        let store = try KeyStore(location)
        try await Self.record(store, "exposureKeyExport-CH/1-2-00001.zip", bytes: [1, 2, 3], at: 0)
        try await Self.record(store, "exposureKeyExport-CH/2-3-00001.zip", bytes: [4, 5], at: 60)
        // What an older version left: a file on disk alone.
        try FileManager.default.createDirectory(atPath: directory.path + "/exports/exposureKeyExport-CH", withIntermediateDirectories: true)
        try Data([9, 9]).write(to: URL(fileURLWithPath: directory.path + "/exports/exposureKeyExport-CH/0-1-00001.zip"))
        let files = try ExportFiles(location, root: "exposureKeyExport-CH", directory: directory.path + "/exports")
        #expect(try await files.file("exposureKeyExport-CH/1-2-00001.zip")?.bytes == [1, 2, 3])
        #expect(try await files.file("exposureKeyExport-CH/0-1-00001.zip")?.bytes == [9, 9])
        #expect(try await files.file("exposureKeyExport-CH/9-9-00001.zip") == nil)
        #expect(
            String(decoding: try await files.index().bytes, as: UTF8.self)
                == "exposureKeyExport-CH/1-2-00001.zip\nexposureKeyExport-CH/2-3-00001.zip")
    }

    /// The cache keeps at most its bound in bytes, the least recently used file out first.
    @Test func theCacheKeepsItsBoundLeastRecentlyUsedOutFirst() async throws {
        let directory = try TemporaryDirectory()
        let location = DatabaseLocation.sqlite(path: directory.path + "/keys.sqlite")
        let store = try KeyStore(location)
        for index in 0..<4 {
            try await Self.record(store, "exposureKeyExport-CH/\(index)-00001.zip", bytes: Array(repeating: UInt8(index), count: 400), at: Int64(index) * 60)
        }
        let files = try ExportFiles(location, root: "exposureKeyExport-CH", directory: nil, cacheLimit: 1000)
        for index in [0, 1, 0, 2, 3] { _ = try await files.file("exposureKeyExport-CH/\(index)-00001.zip") }
        // 0 was used after 1, so 1 went first, then 0 for 3.
        let cached = await files.cached
        #expect(cached.files == 2 && cached.bytes == 800)
        #expect(try await files.file("exposureKeyExport-CH/3-00001.zip")?.bytes.first == 3)
        #expect(await files.cached.bytes <= 1000)
    }
}
