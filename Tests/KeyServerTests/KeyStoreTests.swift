// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeyServer
import SQLite
import Synchronization
import Testing

/// Publishing on either engine: inserts, revisions with the token, and refusals that store nothing.
@Suite(.postgreSQLServer) struct KeyStoreTests {
    static let now = PublishValidatorTests.now

    static func accepted(_ bytes: [UInt8], exportAfter: UnixTime = now) throws -> PublishValidator.AcceptedKey {
        PublishValidator.AcceptedKey(
            key: try TemporaryExposureKey(keyData: Bytes16(bytes)!, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_991_888)),
            transmissionRisk: 2, daysSinceOnsetOfSymptoms: 1, exportAfter: exportAfter)
    }

    @Test(arguments: Engine.available)
    func aLikelyDiagnosisIsConfirmedOnceWithItsToken(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let store = try KeyStore(database.keys)
        let first = try await store.publish(
            [try Self.accepted(Array(repeating: 1, count: 16)), try Self.accepted(Array(repeating: 2, count: 16))], reportType: 2,
            healthAuthority: "ch.example", traveler: false, revisionToken: nil, now: Self.now)
        #expect(first.inserted == 2)
        #expect(!first.revisionToken.isEmpty)

        // The same key again, and a new one, without the token: refused, and the new key not stored.
        await #expect(throws: PublishError(.missingRevisionToken, "a key was published before: send its revision token")) {
            try await store.publish(
                [try Self.accepted(Array(repeating: 3, count: 16)), try Self.accepted(Array(repeating: 1, count: 16))], reportType: 1,
                healthAuthority: "ch.example", traveler: false, revisionToken: nil, now: Self.now)
        }
        #expect(try database.count("exposure") == 2)
        await #expect {
            try await store.publish(
                [try Self.accepted(Array(repeating: 1, count: 16))], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: "forged",
                now: Self.now)
        } throws: { ($0 as? PublishError)?.code == .invalidRevisionToken }

        // Likely → confirmed with the token: revised; a second revision is refused.
        let revised = try await store.publish(
            [try Self.accepted(Array(repeating: 1, count: 16))], reportType: 1, healthAuthority: "ch.example", traveler: false,
            revisionToken: first.revisionToken, now: Self.now)
        #expect(revised.revised == 1 && revised.inserted == 0)
        await #expect {
            try await store.publish(
                [try Self.accepted(Array(repeating: 1, count: 16))], reportType: 5, healthAuthority: "x", traveler: false, revisionToken: first.revisionToken,
                now: Self.now)
        } throws: { ($0 as? PublishError)?.code == .keyAlreadyRevised }
        // Confirmed cannot be revised into anything.
        let confirmed = try await store.publish(
            [try Self.accepted(Array(repeating: 9, count: 16))], reportType: 1, healthAuthority: "ch.example", traveler: false, revisionToken: nil,
            now: Self.now)
        await #expect {
            try await store.publish(
                [try Self.accepted(Array(repeating: 9, count: 16))], reportType: 5, healthAuthority: "x", traveler: false,
                revisionToken: confirmed.revisionToken, now: Self.now)
        } throws: { ($0 as? PublishError)?.code == .invalidReportTypeTransition }
        #expect(try database.count("exposure") == 3)
    }

    @Test(arguments: Engine.available)
    func embargoedKeysAreNotExportableYet(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let store = try KeyStore(database.keys)
        _ = try await store.publish(
            [
                try Self.accepted(Array(repeating: 1, count: 16)),
                try Self.accepted(Array(repeating: 2, count: 16), exportAfter: Self.now.adding(seconds: 3600)),
            ],
            reportType: 1, healthAuthority: "ch.example", traveler: false, revisionToken: nil, now: Self.now)
        #expect(try await store.exportable(now: Self.now) == 1)
        #expect(try await store.exportable(now: Self.now.adding(seconds: 3600)) == 2)
        // A reopened store has them (committed).
        let reopened = try KeyStore(database.keys)
        #expect(try await reopened.exportable(now: Self.now.adding(seconds: 3600)) == 2)
    }

    @Test func aFileThatIsNotADatabaseIsRefusedByName() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/keys.sqlite"
        try "this is not SQLite, just text long enough to be a header...........................".write(toFile: path, atomically: true, encoding: .utf8)
        #expect { try KeyStore(path: path) } throws: { ($0 as? DatabaseError)?.engine == .sqlite }
    }

    /// Files from before PostgreSQL support have `export_batch.end`, a word PostgreSQL reserves:
    /// opened, it becomes `end_time` with its rows.
    @Test func anOldSQLiteFileHasItsEndColumnRenamed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/keys.sqlite"
        try SQLiteDatabase(path: path).execute(
            """
            CREATE TABLE export_batch (id INTEGER PRIMARY KEY AUTOINCREMENT, start INTEGER NOT NULL, end INTEGER NOT NULL,
                name TEXT NOT NULL UNIQUE, keys INTEGER NOT NULL, created INTEGER NOT NULL);
            INSERT INTO export_batch (start, end, name, keys, created) VALUES (1, 2, 'old.zip', 3, 4);
            """)
        let store = try KeyStore(path: path)
        #expect(try await store.batches().map(\.name) == ["old.zip"])
        #expect(try await store.batches().first?.end == UnixTime(seconds: 2))
    }
}

/// Revisions as the reference's Exposure.Revise and InsertAndReviseExposures
/// (internal/publish/model/exposure_model.go, internal/publish/database/exposure.go).
extension KeyStoreTests {
    static func accepted(_ byte: UInt8, risk: Int32, onset: Int32?) throws -> PublishValidator.AcceptedKey {
        var key = try accepted(Array(repeating: byte, count: 16))
        key.transmissionRisk = risk
        key.daysSinceOnsetOfSymptoms = onset
        return key
    }

    @Test(arguments: Engine.available)
    func revisionsFollowTheReference(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let store = try KeyStore(database.keys)
        func publish(_ keys: [PublishValidator.AcceptedKey], _ type: Int32, token: String?) async throws -> KeyStore.Published {
            try await store.publish(keys, reportType: type, healthAuthority: "x", traveler: false, revisionToken: token, now: Self.now)
        }
        // A negative test's keys, published first: nothing is stored (only a revision revokes).
        let negative = try await publish([try Self.accepted(1, risk: 6, onset: 2)], 5, token: nil)
        #expect(negative.inserted == 0)
        #expect(try database.count("exposure") == 0)

        // A self-report may become likely; the same type again is a no-op, not an error.
        let report = try await publish([try Self.accepted(2, risk: 0, onset: 1)], 3, token: nil)
        #expect(report.inserted == 1)
        let again = try await publish([try Self.accepted(2, risk: 0, onset: 1)], 3, token: report.revisionToken)
        #expect(again.inserted == 0 && again.revised == 0)
        let likely = try await publish([try Self.accepted(2, risk: 4, onset: -3)], 2, token: report.revisionToken)
        #expect(likely.revised == 1)
        // Revised to likely already: likely again is a no-op, confirmed is a second revision.
        #expect(try await publish([try Self.accepted(2, risk: 4, onset: -3)], 2, token: report.revisionToken).revised == 0)
        await #expect(throws: PublishError(.keyAlreadyRevised, "a key was already revised")) {
            try await publish([try Self.accepted(2, risk: 2, onset: -3)], 1, token: report.revisionToken)
        }
        // Confirmed → anything, likely → self-report: refused.
        let confirmed = try await publish([try Self.accepted(3, risk: 2, onset: 0)], 1, token: nil)
        await #expect { try await publish([try Self.accepted(3, risk: 2, onset: 0)], 2, token: confirmed.revisionToken) } throws: {
            ($0 as? PublishError)?.code == .invalidReportTypeTransition
        }
        let clinical = try await publish([try Self.accepted(4, risk: 4, onset: 0)], 2, token: nil)
        await #expect { try await publish([try Self.accepted(4, risk: 4, onset: 0)], 3, token: clinical.revisionToken) } throws: {
            ($0 as? PublishError)?.code == .invalidReportTypeTransition
        }

        // The revision's own days since onset and risk are what the export's revised_keys carry.
        _ = try await OneFileExport.export(store, now: Self.now) { _ in "first.zip" }
        let revised = try await publish([try Self.accepted(4, risk: 6, onset: 5)], 5, token: clinical.revisionToken)
        #expect(revised.revised == 1)
        let (name, keys) = try await OneFileExport.export(store, now: Self.now.adding(seconds: 60)) { _ in "second.zip" }
        #expect(name == "second.zip")
        #expect(keys.keys.isEmpty)
        // Key 2 was revised before the first export carried it: its revision follows too.
        #expect(Set(keys.revisions.map(\.key.keyData.bytes)) == [Array(repeating: 2, count: 16), Array(repeating: 4, count: 16)])
        let revoked = try #require(keys.revisions.first { $0.key.keyData.bytes == Array(repeating: 4, count: 16) })
        #expect(revoked.reportType == 5)
        #expect(revoked.transmissionRisk == 6)
        #expect(revoked.daysSinceOnsetOfSymptoms == 5)
        let likelyNow = try #require(keys.revisions.first { $0.key.keyData.bytes == Array(repeating: 2, count: 16) })
        #expect(likelyNow.reportType == 2 && likelyNow.transmissionRisk == 4 && likelyNow.daysSinceOnsetOfSymptoms == -3)
    }
}

/// A key's interval is part of the key: a revision that changes it is refused and changes nothing
/// (ENS internal/publish/database/exposure.go, ErrIncomingMetadataMismatch).
extension KeyStoreTests {
    @Test(arguments: Engine.available)
    func aRevisionCannotMoveAKeysInterval(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let store = try KeyStore(database.keys)
        let first = try await store.publish(
            [try Self.accepted(Array(repeating: 4, count: 16))], reportType: 3, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
        for (start, period) in [(UInt32(2_991_888 - 144), UInt32(144)), (2_991_888, 72)] {
            var moved = try Self.accepted(Array(repeating: 4, count: 16))
            moved.key = try TemporaryExposureKey(
                keyData: moved.key.keyData, rollingStartIntervalNumber: ENIntervalNumber(rawValue: start), rollingPeriod: period)
            await #expect(
                throws: PublishError(
                    .badRequest, "a key was published before with rolling start 2991888 and period 144, not \(start) and \(period)")
            ) {
                try await store.publish([moved], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: first.revisionToken, now: Self.now)
            }
        }
        // Unchanged: the key is still a self-report, and its own interval may still be revised.
        let revised = try await store.publish(
            [try Self.accepted(Array(repeating: 4, count: 16))], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: first.revisionToken,
            now: Self.now)
        #expect(revised.revised == 1)
    }
}
