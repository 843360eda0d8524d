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

        static func worker(_ store: KeyStore, directory: String?, signing: ECDSAPrivateKey) -> ExportWorker {
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
                async let first = workers[0].run(now: time).files.first
                async let second = workers[1].run(now: time).files.first
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

        /// Workers that keep their files in the database alone: each replica's `ExportFiles` serves
        /// the index and every file, whichever replica exported, with the same bytes and entity tag;
        /// files past the retention leave the index and the table.
        @Test func everyReplicaServesEveryExportFromTheDatabase() async throws {
            let database = try TestDatabase(.postgreSQL)
            let signing = try ECDSAPrivateKey()
            let stores = [try KeyStore(database.keys), try KeyStore(database.keys)]
            let workers = stores.map { Self.worker($0, directory: nil, signing: signing) }
            let served = try (0..<2).map { _ in try ExportFiles(database.keys, root: "exposureKeyExport-CH", directory: nil) }
            var names = [String]()
            for step in 0..<3 {
                let keys = try (0..<4).map { try ReplicaPublishTests.key(9, UInt8(step), UInt8($0)) }
                _ = try await stores[step % 2].publish(keys, reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
                names.append(try #require(try await workers[step % 2].run(now: Self.now.adding(seconds: Int64(step) * 600)).files.first))
            }
            let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
            for files in served {
                let index = try await files.index()
                #expect(String(decoding: index.bytes, as: UTF8.self) == names.sorted().joined(separator: "\n"))
                for name in names {
                    let file = try #require(try await files.file(name))
                    #expect(try KeyFile(zip: file.bytes, policy: policy).export.keys.count == 4)
                    #expect(file == (try await served[0].file(name)))
                    #expect(file.entityTag == ExportFiles.entityTag(file.bytes))
                }
                #expect(try await files.file("exposureKeyExport-CH/0-1-00001.zip") == nil)
            }
            // Over HTTP: tags, cache lifetimes, and a conditional GET answered without the bytes.
            let api = try Self.api(database, exports: served[1])
            let index = await api.handle(.init(method: "GET", path: "/exports/exposureKeyExport-CH/index.txt"))
            #expect(index.status == 200)
            #expect(index.headers["Cache-Control"] == "public, max-age=60")
            #expect(index.headers["ETag"] == ExportFiles.entityTag(index.body))
            let path = "/exports/" + names[0]
            let file = await api.handle(.init(method: "GET", path: path))
            #expect(file.status == 200 && file.contentType == "application/zip")
            #expect(file.headers["Cache-Control"] == "public, max-age=31536000, immutable")
            let tag = try #require(file.headers["ETag"])
            let again = await api.handle(.init(method: "GET", path: path, headers: ["If-None-Match": "\"other\", W/\(tag)"]))
            #expect(again.status == 304 && again.body.isEmpty && again.headers["ETag"] == tag)
            #expect(await api.handle(.init(method: "GET", path: path, headers: ["If-None-Match": "\"other\""])).status == 200)
            let head = await api.handle(.init(method: "HEAD", path: path))
            #expect(head.status == 200 && head.headers == file.headers && head.body.count == file.body.count)
            #expect(await api.handle(.init(method: "GET", path: "/exports/exposureKeyExport-CH/../keys.sqlite")).status == 404)

            // Past the retention: the first batch leaves the index, the table and the cache.
            _ = try await stores[0].deleteBefore(Self.now.adding(seconds: 1))
            #expect(try await served[1].index().bytes == Array(names.dropFirst().sorted().joined(separator: "\n").utf8))
            #expect(try database.count("export_file") == 2)
            #expect(try await served[1].file(names[0]) == nil)
        }

        static func api(_ database: TestDatabase, exports: ExportFiles) throws -> KeyServerAPI {
            let signing = try ECDSAPrivateKey()
            let verifier = try Verifier(database.verification, signingKey: signing, codeKey: try TestDatabase.codeKey())
            return KeyServerAPI(
                store: try KeyStore(database.keys), verifier: verifier,
                check: CertificateCheck(
                    verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: verifier.settings.issuer, audience: verifier.settings.audience),
                settings: KeyServerAPI.Settings(healthAuthorities: ["x"], deviceAPIKey: "device", exportDirectory: database.directory.path),
                exports: exports, clock: { Self.now })
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
            // Told apart from "nothing waited": this replica could not look.
            let held = try await worker.run(now: Self.now)
            #expect(held.files.first == nil)
            #expect(held.exportingElsewhere)
            #expect(try database.count("export_batch") == 0)
            try holder.execute("COMMIT")
            let exported = try await worker.run(now: Self.now)
            #expect(exported.files.first != nil)
            #expect(!exported.exportingElsewhere)
            #expect(try database.count("export_batch") == 1)
        }
    }
}
