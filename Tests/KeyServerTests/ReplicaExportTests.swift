// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import KeyServer
import PostgreSQL
import Testing

extension PostgreSQLTests {
    /// Export workers of two replicas on one database: one batch at a time, each key in one file.
    @Suite struct ReplicaExportTests {
        static let now = PublishValidatorTests.now
        /// `DatabaseLock.export`'s advisory lock key, pinned here: replicas of two versions
        /// running side by side during an upgrade must take the same lock.
        static let exportLock: Int64 = 0x6761_656E_0000_0002

        static func worker(_ store: KeyStore, directory: String, signing: ECDSAPrivateKey) -> ExportWorker {
            ExportWorker(
                store: store, signingKey: signing,
                settings: ExportWorker.Settings(directory: directory, root: "exposureKeyExport-CH", region: "CH", keyID: "310", keyVersion: "v1"))
        }

        @Test func twoExportWorkersRacingExportEachKeyOnce() async throws {
            let database = try TestDatabase(.postgreSQL)
            let signing = try ECDSAPrivateKey()
            let stores = [try KeyStore(database.keys), try KeyStore(database.keys)]
            let directories = [database.directory.path + "/replica0", database.directory.path + "/replica1"]
            let workers = (0..<2).map { Self.worker(stores[$0], directory: directories[$0], signing: signing) }
            var published = Set<[UInt8]>()
            for step in 0..<6 {
                let keys = try (0..<4).map { try ReplicaPublishTests.key(7, UInt8(step), UInt8($0)) }
                _ = try await stores[step % 2].publish(keys, reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
                published.formUnion(keys.map(\.key.keyData.bytes))
                // Both replicas' timers fire at once: one exports the step's keys, the other nothing.
                let time = Self.now.adding(seconds: Int64(step) * 600)
                async let first = workers[0].run(now: time)
                async let second = workers[1].run(now: time)
                #expect(try await [first, second].compactMap { $0 }.count == 1)
            }

            let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
            var exported = [[UInt8]: Int]()
            for directory in directories {
                let folder = directory + "/exposureKeyExport-CH"
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".zip") {
                    let file = try KeyFile(zip: Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))), policy: policy)
                    for key in file.export.keys { exported[key.key.keyData.bytes, default: 0] += 1 }
                }
            }
            #expect(Set(exported.keys) == published)
            #expect(exported.values.allSatisfy { $0 == 1 })
            #expect(try database.count("export_batch") == 6)
        }

        /// The lock made certain: while another session holds it, a worker exports nothing and
        /// marks nothing; once it is released, the keys go out.
        @Test func aWorkerFindingTheExportLockTakenExportsNothing() async throws {
            let database = try TestDatabase(.postgreSQL)
            let store = try KeyStore(database.keys)
            let worker = Self.worker(store, directory: database.directory.path + "/www", signing: try ECDSAPrivateKey())
            _ = try await store.publish(
                [try ReplicaPublishTests.key(8)], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
            let holder = try PostgreSQLConnection(try #require(database.url))
            try holder.execute("BEGIN")
            #expect(try holder.query("SELECT pg_try_advisory_xact_lock($1)::int", [.integer(Self.exportLock)]) == [[.integer(1)]])
            #expect(try await worker.run(now: Self.now) == nil)
            #expect(try database.count("export_batch") == 0)
            try holder.execute("COMMIT")
            #expect(try await worker.run(now: Self.now) != nil)
            #expect(try database.count("export_batch") == 1)
        }
    }
}
