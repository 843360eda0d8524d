// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import GaendTestSupport
import KeyServer
import PostgreSQL
import Synchronization
import Testing

extension PostgreSQLTests {
    /// Two replicas (two `KeyStore`s on one database) publishing and revising at once.
    @Suite struct ReplicaPublishTests {
        static let now = PublishValidatorTests.now

        static func key(_ bytes: UInt8...) throws -> PublishValidator.AcceptedKey {
            try KeyStoreTests.accepted(bytes + Array(repeating: 0, count: 16 - bytes.count))
        }

        /// Each publish either stores all its keys or none; a key both replicas publish at once is
        /// stored once, and the later publish is told to send a revision token.
        @Test func concurrentPublishesLoseAndDuplicateNothing() async throws {
            let database = try TestDatabase(.postgreSQL)
            let replicas = [try KeyStore(database.keys), try KeyStore(database.keys)]
            let rounds = 15
            let outcomes = try await withThrowingTaskGroup(of: (contested: Bool, code: PublishError.Code?).self) { group in
                for round in 0..<rounds {
                    for (index, store) in replicas.enumerated() {
                        group.addTask {
                            let own = try (0..<3).map { try Self.key(1, UInt8(index), UInt8(round), UInt8($0)) }
                            let published = try await store.publish(
                                own, reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
                            return (false, published.inserted == 3 ? nil : .internalError)
                        }
                        group.addTask {
                            let contested = try Self.key(2, UInt8(round))
                            do {
                                _ = try await store.publish(
                                    [contested], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
                                return (true, nil)
                            } catch {
                                return (true, (error as? PublishError)?.code ?? .internalError)
                            }
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { !$0.contested }.allSatisfy { $0.code == nil })
            let contested = outcomes.filter(\.contested)
            #expect(contested.filter { $0.code == nil }.count == rounds)
            #expect(contested.filter { $0.code == .missingRevisionToken }.count == rounds)
            #expect(try database.count("exposure") == Int64(rounds * 2 * 3 + rounds))
            #expect(try database.count("revision_token_key") == Int64(rounds * 2 * 3 + rounds))
        }

        /// The race made certain: another session inserts a key and holds its transaction open
        /// while a publish of that key and another waits on it; once it commits, the publish runs
        /// again, finds the key, and stores nothing.
        @Test func aKeyStoredByAnotherReplicaMidPublishTakesTheRevisionPath() async throws {
            let database = try TestDatabase(.postgreSQL)
            let url = try #require(database.url)
            let store = try KeyStore(database.keys)
            let other = try PostgreSQLConnection(url)
            let watcher = try PostgreSQLConnection(url)
            try other.execute("BEGIN")
            try other.query(
                """
                INSERT INTO exposure (key, rolling_start, rolling_period, transmission_risk, report_type, health_authority, export_after, created)
                VALUES ($1, 2991888, 144, 2, 2, 'x', 0, 0)
                """, [.blob(try Self.key(3).key.keyData.bytes)])
            async let publishing = store.publish(
                [try Self.key(4), try Self.key(3)], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
            try await eventually("the publish to wait for the other session's key") {
                try watcher.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").first?.first
                    == .integer(1)
            }
            try other.execute("COMMIT")
            do {
                _ = try await publishing
                Issue.record("a publish of a key another session stored was accepted")
            } catch {
                #expect(error as? PublishError == PublishError(.missingRevisionToken, "a key was published before: send its revision token"))
            }
            #expect(try database.count("exposure") == 1)
            #expect(try database.count("revision_token") == 0)
        }

        /// Stores waiting on a lock another session holds wait on threads of their own: one more
        /// store than the cooperative pool has threads waits, and a task on the pool still runs.
        /// On the pool (the actor's default executor) they took every thread, and nothing else in
        /// the process ran until the lock went: in the key server, every HTTP request. The
        /// publishes start detached, as the server's handlers do, so no executor preference of
        /// the test's moves them off the pool.
        @Test func storesWaitingOnALockHoldNoPoolThread() async throws {
            let database = try TestDatabase(.postgreSQL)
            let url = try #require(database.url)
            let other = try PostgreSQLConnection(url)
            let watcher = try PostgreSQLConnection(url)
            let poolThreads = ProcessInfo.processInfo.activeProcessorCount
            let stores = try (0...poolThreads).map { _ in try KeyStore(database.keys) }
            try other.execute("BEGIN")
            try other.execute("LOCK TABLE exposure IN EXCLUSIVE MODE")
            let publishes = try stores.enumerated().map { index, store in
                let key = try Self.key(7, UInt8(index))
                return Task.detached {
                    try await store.publish([key], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
                }
            }
            func waiting() throws -> Int64 {
                try watcher.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
                    .first?.first?.integer ?? 0
            }
            // Waits here block this thread (not one of the pool's): bounds, not speeds.
            for _ in 0..<3000 where try waiting() < poolThreads { usleep(10_000) }
            #expect(try waiting() >= poolThreads)
            let ran = Atomic<Bool>(false)
            Task.detached { ran.store(true, ordering: .releasing) }
            // Under the server's lock_timeout of the test server (20 s), after which they give up.
            for _ in 0..<1000 where !ran.load(ordering: .acquiring) { usleep(10_000) }
            let didRun = ran.load(ordering: .acquiring)
            #expect(didRun, "a task on the cooperative pool did not run in 10 s while \(stores.count) stores waited on a lock")
            try other.execute("COMMIT")
            for publish in publishes { #expect(try await publish.value.inserted == 1) }
            #expect(try database.count("exposure") == Int64(stores.count))
        }

        /// A token from one replica revises on the other, once; two replicas revising one key at
        /// once: one wins, the other is told it was revised.
        @Test func revisionTokensWorkAcrossReplicas() async throws {
            let database = try TestDatabase(.postgreSQL)
            let first = try KeyStore(database.keys)
            let second = try KeyStore(database.keys)
            let likely = try await first.publish([try Self.key(5)], reportType: 2, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now)
            let confirmed = try await second.publish(
                [try Self.key(5)], reportType: 1, healthAuthority: "x", traveler: false, revisionToken: likely.revisionToken, now: Self.now)
            #expect(confirmed.revised == 1)
            await #expect(throws: PublishError(.keyAlreadyRevised, "a key was already revised")) {
                try await first.publish(
                    [try Self.key(5)], reportType: 5, healthAuthority: "x", traveler: false, revisionToken: likely.revisionToken, now: Self.now)
            }

            let keys = 10
            var tokens = [String]()
            for index in 0..<keys {
                tokens.append(
                    try await first.publish(
                        [try Self.key(6, UInt8(index))], reportType: 2, healthAuthority: "x", traveler: false, revisionToken: nil, now: Self.now
                    )
                    .revisionToken)
            }
            let issued = tokens
            let codes = try await withThrowingTaskGroup(of: PublishError.Code?.self) { group in
                for index in 0..<keys {
                    for (store, reportType) in [(first, Int32(1)), (second, Int32(5))] {
                        group.addTask {
                            let key = try Self.key(6, UInt8(index))
                            do {
                                _ = try await store.publish(
                                    [key], reportType: reportType, healthAuthority: "x", traveler: false, revisionToken: issued[index], now: Self.now)
                                return nil
                            } catch {
                                return (error as? PublishError)?.code ?? .internalError
                            }
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(codes.filter { $0 == nil }.count == keys)
            #expect(codes.filter { $0 == .keyAlreadyRevised }.count == keys)
        }
    }
}
