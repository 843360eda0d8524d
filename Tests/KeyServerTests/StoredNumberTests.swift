// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyServer
import SQLite
import Testing

/// Rows of the keys' database whose numbers no key file can carry (a damaged file, or a replica
/// writing a newer schema into the shared database): the export leaves them out instead of
/// trapping on their conversion.
@Suite(.ownThreads) struct StoredNumberTests {
    @Test func rowsNoKeyFileCanCarryAreLeftOut() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/keys.sqlite"
        let store = try KeyStore(.sqlite(path: path))
        let raw = try SQLiteDatabase(path: path)
        let start = PublishValidatorTests.today - 144
        func insert(_ byte: UInt8, start: Int64, report: Int64 = 1, onset: Int64? = nil) throws {
            _ = try raw.query(
                """
                INSERT INTO exposure (key, rolling_start, rolling_period, transmission_risk, report_type, days_since_onset, health_authority,
                export_after, created) VALUES (?1, ?2, 144, 0, ?3, ?4, 'x', 0, 0)
                """, [.blob(Array(repeating: byte, count: 16)), .integer(start), .integer(report), onset.map { .integer($0) } ?? .null])
        }
        try insert(1, start: start)
        try insert(2, start: 1 << 40)  // no uint32
        try insert(3, start: Int64(UInt32.max))  // its intervals run past the last interval number
        try insert(4, start: start, report: 1 << 40)
        try insert(5, start: start, onset: -(1 << 40))
        // A batch that ended at no time a clock can show.
        _ = try raw.query("INSERT INTO export_batch (start, end_time, name, keys, created) VALUES (?1, ?1, 'far', 0, 0)", [.integer(1 << 62)])

        let name = try await OneFileExport.export(store, now: PublishValidatorTests.now) { pending in
            "keys \(pending.keys.map { $0.key.keyData.bytes[0] }) from \(pending.start.seconds)"
        }.name
        #expect(name == "keys [1] from \(PublishValidatorTests.now.seconds - 86_400)")
        #expect(try await store.batches().map(\.name) == [name])
    }

    /// A last batch that ended before 1970 starts no batch: the file's start is a uint64.
    @Test func aBatchEndBefore1970StartsNoBatch() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/keys.sqlite"
        let store = try KeyStore(.sqlite(path: path))
        let raw = try SQLiteDatabase(path: path)
        _ = try raw.query(
            """
            INSERT INTO exposure (key, rolling_start, rolling_period, transmission_risk, report_type, health_authority, export_after, created)
            VALUES (?1, ?2, 144, 0, 1, 'x', 0, 0)
            """, [.blob(Array(repeating: 1, count: 16)), .integer(PublishValidatorTests.today - 144)])
        _ = try raw.query("INSERT INTO export_batch (start, end_time, name, keys, created) VALUES (-10, -5, 'before', 0, 0)")
        let worker = ExportWorker(
            store: store, signingKey: try ECDSAPrivateKey(),
            settings: ExportWorker.Settings(directory: directory.path + "/exports", root: "root", region: "XX", keyID: "310", keyVersion: "v1"))
        let now = PublishValidatorTests.now
        #expect(try await worker.run(now: now).files.first == "root/\(now.seconds - 86_400)-\(now.seconds)-00001.zip")
    }
}
