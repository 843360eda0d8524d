// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import ENCrypto
import Foundation
import KeyFiles
import KeyServer

/// The attacks on the API's secrets: guessed codes, and certificates and tokens that are forged,
/// expired, unsigned (`alg: none`) or signed with HMAC keyed by the public key (HS256).
struct APIAttacks {
    let port: Int
    let verificationKey: ECDSAPrivateKey

    /// `count` wrong codes from one client on kept-alive connections: a few are answered as
    /// wrong, then 429 until the client's budget of failures refills.
    func wrongCodes(count: Int, failureBudget: Int) -> AttackOutcome {
        var statuses = [Int]()
        var retryAfter = true
        var connection: RawConnection?
        for guess in 0..<count {
            if connection == nil { connection = try? RawConnection(to: port, from: "127.0.0.16") }
            guard let open = connection else {
                statuses.append(0)
                continue
            }
            let body = #"{"code":"\#(String(format: "%08d", (guess * 7_919) % 100_000_000))"}"#
            open.send(
                "POST /api/verify HTTP/1.1\r\nHost: x\r\nX-API-Key: \(BenchKeyServer.deviceKey)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )
            guard let response = open.readResponse() else {
                statuses.append(0)
                connection = nil
                continue
            }
            statuses.append(response.status)
            if response.status == 429 { retryAfter = retryAfter && Int(response.headers["retry-after"] ?? "") ?? 0 > 0 }
        }
        var outcome = AttackOutcome("\(count) wrong codes from one client", statuses: statuses, expected: [400, 429])
        outcome.checks["at most \(failureBudget) looked up"] = statuses.filter { $0 == 400 }.count <= failureBudget
        outcome.checks["429 has Retry-After"] = retryAfter
        return outcome
    }

    /// Certificates for real keys, with the right HMAC, that must not be believed: signed by
    /// another key, expired, unsigned, HS256 keyed by the verification server's public key.
    func certificates() async throws -> [AttackOutcome] {
        let transport = RawTransport(port: port, source: "127.0.0.17")
        let publisher = PublishClient(publishURL: "http://127.0.0.1:\(port)/v1/publish", healthAuthorityID: "bench", transport: transport)
        let now = Int64(Date().timeIntervalSince1970)
        let today = UTCDay(containing: UnixTime(seconds: now))
        var generator = SystemRandomNumberGenerator()
        let keys = try (1...3).map { day in
            guard let start = today.advanced(by: Int64(-day)).firstInterval,
                let bytes = Bytes16((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
            else {
                throw ValidationError("no interval for the day \(day) before \(today)")
            }
            return DiagnosisKey(
                key: try TemporaryExposureKey(keyData: bytes, rollingStartIntervalNumber: start), transmissionRiskLevel: 0, reportType: .confirmedTest)
        }
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let settings = Verifier.Settings()
        let claims: [String: Any] = [
            "iss": settings.issuer, "aud": settings.audience, "iat": now, "nbf": now - 60, "exp": now + 900,
            "tekmac": Data(TEKHMAC.compute(keys, secret: secret)).base64EncodedString(), "reportType": "confirmed",
        ]
        var expired = claims
        expired["iat"] = now - 7200
        expired["nbf"] = now - 7200
        expired["exp"] = now - 3600
        let forgedCertificates: [(String, String)] = [
            ("certificate signed by another key", try JWT.sign(claims, keyID: settings.keyID, key: ECDSAPrivateKey())),
            ("expired certificate", try JWT.sign(expired, keyID: settings.keyID, key: verificationKey)),
            ("certificate with alg: none", Self.unsigned(claims)),
            ("certificate HS256 keyed by the public key", Self.hs256(claims, key: Array(verificationKey.publicKeyPEM.utf8))),
        ]
        var outcomes = [AttackOutcome]()
        for (name, certificate) in forgedCertificates {
            var status = 200
            do {
                _ = try await publisher.publish(keys: keys, certificate: certificate, hmacSecret: secret)
            } catch {
                if case .server(_, let code, _, _) = error { status = code } else { status = 0 }
            }
            outcomes.append(AttackOutcome(name, statuses: [status], expected: [401]))
        }
        // Tokens for /api/certificate, forged the same ways.
        let token: [String: Any] = ["iss": settings.issuer, "aud": settings.issuer, "sub": UUID().uuidString, "iat": now, "exp": now + 3600]
        let verification = VerificationClient(
            verifyURL: "http://127.0.0.1:\(port)/api/verify", certificateURL: "http://127.0.0.1:\(port)/api/certificate", apiKey: BenchKeyServer.deviceKey,
            transport: transport)
        for (name, forged) in [
            ("token with alg: none", Self.unsigned(token)),
            ("token HS256 keyed by the public key", Self.hs256(token, key: Array(verificationKey.publicKeyPEM.utf8))),
        ] {
            var status = 200
            do {
                _ = try await verification.certificate(token: forged, keysHMAC: TEKHMAC.compute(keys, secret: secret))
            } catch {
                if case .server(_, let code, _, _) = error { status = code } else { status = 0 }
            }
            outcomes.append(AttackOutcome(name, statuses: [status], expected: [400]))
        }
        return outcomes
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
    }

    static func json(_ object: [String: Any]) -> [UInt8] { Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()) }

    static func unsigned(_ claims: [String: Any]) -> String {
        base64URL(json(["alg": "none", "typ": "JWT"])) + "." + base64URL(json(claims)) + "."
    }

    static func hs256(_ claims: [String: Any], key: [UInt8]) -> String {
        let input = base64URL(json(["alg": "HS256", "typ": "JWT"])) + "." + base64URL(json(claims))
        return input + "." + base64URL(Digest.hmacSHA256(key: key, message: Array(input.utf8)))
    }
}
