// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyServer
import PostgreSQL
import Testing

extension PostgreSQLTests {
    /// The budgets of failed attempts of replicas on one database (`SharedFailureBudget`): a
    /// client gets one budget however its guesses are spread, and the table keeps only recent rows.
    @Suite struct ReplicaBudgetTests {
        static let limit = RateLimit(tokens: 30, interval: 3600)

        /// Two replicas' APIs on one database, each with its own budget connection, and a clock.
        struct Replicas {
            let database: TestDatabase
            let apis: [KeyServerAPI]
            let budgets: [SharedFailureBudget]
            let clock: ManualClock

            init(count: Int = 2, maximumRows: Int = 1_000_000) async throws {
                database = try TestDatabase(.postgreSQL)
                let url = try #require(database.url)
                let signing = try ECDSAPrivateKey()
                let clock = ManualClock(UnixTime(seconds: Int64(Date().timeIntervalSince1970)))
                self.clock = clock
                var settings = KeyServerAPI.Settings(healthAuthorities: ["x"], deviceAPIKey: "device-key", exportDirectory: database.directory.path)
                settings.adminAPIKey = "admin-key"
                var limits = RequestLimits.Settings()
                limits.failures = ReplicaBudgetTests.limit
                var apis = [KeyServerAPI]()
                var budgets = [SharedFailureBudget]()
                for _ in 0..<count {
                    let verifier = try Verifier(database.verification, signingKey: signing, codeKey: try TestDatabase.codeKey())
                    let budget = try SharedFailureBudget(connectionString: url, limit: ReplicaBudgetTests.limit, maximumRows: maximumRows)
                    budgets.append(budget)
                    apis.append(
                        KeyServerAPI(
                            store: try KeyStore(database.keys), verifier: verifier,
                            check: CertificateCheck(
                                verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: verifier.settings.issuer,
                                audience: verifier.settings.audience),
                            settings: settings,
                            limits: RequestLimits(
                                limits,
                                failures: FailureLevels(limits) { level, limit in
                                    level == .client ? budget as any FailureBudget : MemoryFailureBudget(limit, maximumClients: limits.maximumClients)
                                }), clock: { clock.now() }))
                }
                self.apis = apis
                self.budgets = budgets
            }

            func verify(_ code: String, on replica: Int, from client: String = "192.0.2.7") async -> KeyServerAPI.Response {
                await Self.verify(code, on: apis[replica % apis.count], from: client)
            }

            static func verify(_ code: String, on api: KeyServerAPI, from client: String = "192.0.2.7") async -> KeyServerAPI.Response {
                await api.handle(
                    .init(
                        method: "POST", path: "/api/verify", headers: ["X-API-Key": "device-key", "Content-Type": "application/json"],
                        body: Array(#"{"code":"\#(code)"}"#.utf8), client: client))
            }

            func issueCode(on replica: Int, from client: String = "192.0.2.7") async throws -> String {
                let issued = await apis[replica % apis.count].handle(
                    .init(
                        method: "POST", path: "/admin/codes", headers: ["X-API-Key": "admin-key"], body: Array(#"{"testType":"confirmed"}"#.utf8),
                        client: client))
                #expect(issued.status == 200)
                return try #require((try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])?["code"] as? String)
            }
        }

        /// 200 wrong codes from one client, alternating between two replicas: 30 are looked up and
        /// answered as wrong, the rest 429, as with one replica; the administrator at that address
        /// is never refused; a right code spends nothing.
        @Test func oneClientGetsOneBudgetAcrossReplicas() async throws {
            let replicas = try await Replicas()
            let code = try await replicas.issueCode(on: 1)
            #expect(await replicas.verify(code, on: 0).status == 200)
            var statuses = [Int: Int]()
            for guess in 0..<200 {
                statuses[await replicas.verify(String(format: "%08d", guess), on: guess).status, default: 0] += 1
                if guess % 50 == 0 { _ = try await replicas.issueCode(on: guess + 1) }
            }
            #expect(statuses == [400: 30, 429: 170])
            // A refusal remembered by a replica costs that replica no statement.
            let before = await replicas.budgets[0].statements
            #expect(await replicas.verify("99999999", on: 0).status == 429)
            #expect(await replicas.budgets[0].statements == before)
            // Another client is untouched; two minutes refill one attempt (30 an hour).
            #expect(await replicas.verify("00000000", on: 1, from: "192.0.2.8").status == 400)
            replicas.clock.advance(seconds: 120)
            #expect(await replicas.verify("00000000", on: 1).status == 400)
            #expect(await replicas.verify("00000001", on: 0).status == 429)
        }

        /// 100 wrong guesses at once, spread over three replicas: the reservation is atomic, so
        /// exactly the budget is looked up, however the guesses interleave.
        @Test func concurrentGuessesOnThreeReplicasSpendExactlyTheBudget() async throws {
            let replicas = try await Replicas(count: 3)
            let apis = replicas.apis
            let statuses = await withTaskGroup(of: Int.self) { group in
                for guess in 0..<100 {
                    group.addTask { await Replicas.verify(String(format: "%08d", guess), on: apis[guess % apis.count]).status }
                }
                return await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(statuses == [400: 30, 429: 70])
        }

        /// A flood from many addresses: once a prune finds the table at its bound, clients with a
        /// row keep their own budget and newcomers share one overflow bucket, so the table stops
        /// growing and the flood's guesses are 30 in all.
        @Test func pastItsBoundTheTableKeepsItsClientsAndNewcomersShareOneBucket() async throws {
            let replicas = try await Replicas(count: 1, maximumRows: 5)
            let code = try await replicas.issueCode(on: 0, from: "198.51.100.1")  // a row for the administrator's secret
            for client in 1...5 { #expect(await replicas.verify("00000000", on: 0, from: "198.51.100.\(client)").status == 400) }
            replicas.clock.advance(seconds: 60)  // the next reservation prunes and finds the table full
            #expect(await replicas.verify("00000001", on: 0, from: "198.51.100.1").status == 400)
            // A newcomer's right code takes from the overflow bucket and gives it back there.
            #expect(await replicas.verify(code, on: 0, from: "203.0.113.200").status == 200)
            var newcomers = [Int: Int]()
            for client in 1...40 { newcomers[await replicas.verify("00000000", on: 0, from: "203.0.113.\(client)").status, default: 0] += 1 }
            #expect(newcomers == [400: 30, 429: 10])
            #expect(await replicas.verify("00000001", on: 0, from: "198.51.100.2").status == 400)
            #expect(try await replicas.budgets[0].rows() == 7)  // the six and the overflow bucket
        }

        /// What one guess costs, and the table's bound: one statement per wrong guess, two per
        /// right code (its attempt given back); rows untouched for an interval are deleted.
        @Test func aWrongGuessCostsOneStatementAndOldRowsGo() async throws {
            let replicas = try await Replicas(count: 1)
            let budget = replicas.budgets[0]
            _ = await replicas.verify("00000000", on: 0)  // the first also prunes (once a minute)
            let start = await budget.statements
            for client in 1...20 { #expect(await replicas.verify("00000000", on: 0, from: "198.51.100.\(client)").status == 400) }
            #expect(await budget.statements - start == 20)
            let code = try await replicas.issueCode(on: 0, from: "198.51.100.99")
            let beforeRight = await budget.statements
            #expect(await replicas.verify(code, on: 0, from: "198.51.100.99").status == 200)
            #expect(await budget.statements - beforeRight == 2)
            #expect(try await budget.rows() == 23)  // 192.0.2.7, 20 guessers, 198.51.100.99 twice (admin and public)
            replicas.clock.advance(seconds: 3600)
            _ = await replicas.verify("00000000", on: 0, from: "203.0.113.1")
            #expect(try await budget.rows() == 1)
        }
    }
}
