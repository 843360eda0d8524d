// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyServer
import Testing

extension PostgreSQLTests {
    /// Verifiers of two replicas on one database: a code gives one token, a token one certificate.
    @Suite struct ReplicaVerificationTests {
        static let now = PublishValidatorTests.now

        @Test func aCodeAndItsTokenAreUsedOnceAcrossReplicas() async throws {
            let database = try TestDatabase(.postgreSQL)
            let signing = try ECDSAPrivateKey()
            let key = try TestDatabase.codeKey()
            let replicas = [
                try Verifier(database.verification, signingKey: signing, codeKey: key), try Verifier(database.verification, signingKey: signing, codeKey: key),
            ]
            var codes = [String]()
            for index in 0..<8 {
                codes.append(try await replicas[index % 2].issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now).code)
            }
            let issued = codes
            // Both replicas get every code at once: one token each, and one refusal.
            let tokens = try await withThrowingTaskGroup(of: String?.self) { group in
                for code in issued {
                    for verifier in replicas {
                        group.addTask { try? await verifier.verify(code: code, accept: Set(Verifier.testTypes), now: Self.now).token }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.compactMap { $0 }
            }
            #expect(tokens.count == issued.count)
            // Both replicas get every token at once: one certificate each.
            let hmac = Data(repeating: 7, count: 32).base64EncodedString()
            let certificates = try await withThrowingTaskGroup(of: String?.self) { group in
                for token in tokens {
                    for verifier in replicas {
                        group.addTask { try? await verifier.certificate(token: token, keysHMAC: hmac, now: Self.now) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.compactMap { $0 }
            }
            #expect(certificates.count == tokens.count)
        }
    }
}
