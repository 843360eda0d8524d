// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyFiles
import KeyServer
import Storage
import Testing

/// gaend's own clients (the ones Manager1's sharing and detection use) against the key server's
/// API in process: an administrator's code, verify, certificate, publish, export, download.
@Suite(.postgreSQLServer) struct APITests {
    /// Carries the clients' requests to `KeyServerAPI.handle`.
    struct InProcessTransport: HTTPTransport {
        let api: KeyServerAPI
        func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
            guard let url = URL(string: request.url) else { throw .badURL(request.url) }
            let response = await api.handle(
                KeyServerAPI.Request(method: request.method, path: url.path, headers: Dictionary(request.headers, uniquingKeysWith: { $1 }), body: request.body)
            )
            return HTTPResponse(status: response.status, headers: ["content-type": response.contentType], body: response.body)
        }
    }

    @Test(arguments: Engine.available)
    func aDeviceSharesItsKeysAndAnotherDownloadsThem(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let directory = database.directory
        let verificationKey = try ECDSAPrivateKey()
        let exportKey = try ECDSAPrivateKey()
        let store = try KeyStore(database.keys)
        let verifier = try Verifier(database.verification, signingKey: verificationKey, codeKey: try TestDatabase.codeKey())
        var settings = KeyServerAPI.Settings(healthAuthorities: ["ch.example"], deviceAPIKey: "device-key", exportDirectory: directory.path + "/www")
        settings.adminAPIKey = "admin-key"
        let now = UnixTime(seconds: Int64(Date().timeIntervalSince1970))
        let api = KeyServerAPI(
            store: store, verifier: verifier,
            check: CertificateCheck(
                verifierKey: try ECDSAPublicKey(pem: verificationKey.publicKeyPEM), issuer: verifier.settings.issuer, audience: verifier.settings.audience),
            settings: settings, clock: { now })
        let transport = InProcessTransport(api: api)

        // The administrator issues a code.
        let refused = await api.handle(
            .init(method: "POST", path: "/admin/codes", headers: ["X-API-Key": "wrong"], body: Array(#"{"testType":"confirmed"}"#.utf8)))
        #expect(refused.status == 401)
        let issued = await api.handle(
            .init(
                method: "POST", path: "/admin/codes", headers: ["X-API-Key": "admin-key"],
                body: Array(#"{"testType":"confirmed","symptomDate":"\#(UTCDay(containing: now).advanced(by: -3))"}"#.utf8)))
        let code = try #require((try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])?["code"] as? String)

        // The device: verify, certificate over its keys' HMAC, publish — gaend's clients, unchanged.
        let client = VerificationClient(
            verifyURL: "http://server/api/verify", certificateURL: "http://server/api/certificate", apiKey: "device-key", transport: transport)
        let verified = try await client.verify(code: code)
        #expect(verified.testType == "confirmed")
        let today = try #require(ENIntervalNumber(containing: now)).rollingStart
        let keys = try (1...3).map { day in
            DiagnosisKey(
                key: try TemporaryExposureKey(
                    keyData: Bytes16(Array(repeating: UInt8(day), count: 16))!, rollingStartIntervalNumber: today.advanced(by: -144 * day)),
                transmissionRiskLevel: 0, reportType: .confirmedTest)
        }
        let secret = Array(repeating: UInt8(9), count: 32)
        let certificate = try await client.certificate(token: verified.token, keysHMAC: TEKHMAC.compute(keys, secret: secret))
        let publisher = PublishClient(publishURL: "http://server/v1/publish", healthAuthorityID: "ch.example", transport: transport)
        let result = try await publisher.publish(keys: keys, certificate: certificate, hmacSecret: secret)
        #expect(result.insertedExposures == 3)
        #expect(result.revisionToken != nil)
        // The same certificate again: the token was used, but the certificate itself still checks;
        // the keys are known, so without the revision token the publish is refused by name.
        await #expect { try await publisher.publish(keys: keys, certificate: certificate, hmacSecret: secret) } throws: {
            ($0 as? ClientError)?.serverCode == "missing_revision_token"
        }
        // Another authority, or keys that do not match the certificate: refused.
        let stranger = PublishClient(publishURL: "http://server/v1/publish", healthAuthorityID: "xx.other", transport: transport)
        await #expect { try await stranger.publish(keys: keys, certificate: certificate, hmacSecret: secret) } throws: {
            ($0 as? ClientError)?.serverCode == "unknown_health_authority_id"
        }
        await #expect { try await publisher.publish(keys: Array(keys.prefix(2)), certificate: certificate, hmacSecret: secret) } throws: {
            ($0 as? ClientError)?.serverCode == "health_authority_verification_certificate_invalid"
        }

        // The export, and a device downloading it with gaend's downloader and signature policy.
        var exportSettings = ExportWorker.Settings(
            directory: directory.path + "/www", root: "exposureKeyExport-CH", region: "CH", keyID: "310", keyVersion: "v1")
        exportSettings.minimumRecords = 0
        // Nothing is out before the 2-hour embargo after publication (issue 53).
        #expect(try await ExportWorker(store: store, signingKey: exportKey, settings: exportSettings).run(now: now).files.first == nil)
        let exported = now.adding(seconds: 7200)
        _ = try await ExportWorker(store: store, signingKey: exportKey, settings: exportSettings).run(now: exported).files.first
        let downloader = KeyFileDownloader(
            indexURL: "http://server/exports/exposureKeyExport-CH/index.txt", baseURL: "http://server/exports", transport: transport)
        let pending = try await downloader.index()
        #expect(pending.count == 1)
        let file = try KeyFile(
            zip: try await downloader.download(pending[0]),
            policy: SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: exportKey.publicKeyPEM)]))
        #expect(file.verdict.isVerified)
        #expect(Set(file.export.keys.map(\.key.keyData)) == Set(keys.map(\.key.keyData)))
        #expect(file.export.keys.allSatisfy { $0.daysSinceOnsetOfSymptoms != nil })

        // Paths outside the export directory are not served.
        for path in ["/exports/../keys.sqlite", "/exports/.hidden", "/exports/", "/nothing"] {
            #expect(await api.handle(.init(method: "GET", path: path)).status == 404, "\(path)")
        }
        #expect(await api.handle(.init(method: "GET", path: "/v1/publish")).status == 405)
        #expect(await api.handle(.init(method: "POST", path: "/v1/publish", body: Array(repeating: 0x20, count: 70_000))).status == 413)
    }
}

extension APITests {
    /// The publish response as the reference's (internal/publish/publish.go): insertedExposures
    /// counts new keys only, `partial_failure` only when a key was bad; a key too far from the
    /// symptom onset is a warning in a response without a code.
    @Test(arguments: Engine.available)
    func insertedExposuresCountsNewKeysAndPartialFailureMeansABadKey(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let signing = try ECDSAPrivateKey()
        let now = PublishValidatorTests.now
        let today = PublishValidatorTests.today
        let api = KeyServerAPI(
            store: try KeyStore(database.keys), verifier: try Verifier(database.verification, signingKey: signing, codeKey: try TestDatabase.codeKey()),
            check: CertificateCheck(verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: "i", audience: "a"),
            settings: KeyServerAPI.Settings(healthAuthorities: ["x"], deviceAPIKey: "device", exportDirectory: database.directory.path), clock: { now })
        let secret = Array(repeating: UInt8(5), count: 16)
        func publish(_ keys: [(UInt8, Int64, Int64)], type: String, onset: Int64? = nil, token: String? = nil) async throws -> [String: Any] {
            let texts = keys.map { (Data(repeating: $0.0, count: 16).base64EncodedString(), $0.1, $0.2) }.sorted { $0.0 < $1.0 }
            let cleartext = texts.map { "\($0.0).\($0.1).\($0.2).0" }.joined(separator: ",")
            let certificate = try JWT.sign(
                [
                    "iss": "i", "aud": "a", "reportType": type, "exp": now.seconds + 60,
                    "tekmac": Data(Digest.hmacSHA256(key: secret, message: Array(cleartext.utf8))).base64EncodedString(),
                ],
                keyID: "v1", key: signing)
            var object: [String: Any] = [
                "temporaryExposureKeys": texts.map { ["key": $0.0, "rollingStartNumber": $0.1, "rollingPeriod": $0.2] },
                "healthAuthorityID": "x", "verificationPayload": certificate, "hmacKey": Data(secret).base64EncodedString(),
            ]
            object["symptomOnsetInterval"] = onset
            object["revisionToken"] = token
            let response = await api.handle(
                .init(
                    method: "POST", path: "/v1/publish", headers: ["Content-Type": "application/json"],
                    body: Array(try JSONSerialization.data(withJSONObject: object))))
            var body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            body["status"] = response.status
            return body
        }
        let first = try await publish([(1, today - 144, 144), (2, today - 288, 144)], type: "likely")
        #expect(first["insertedExposures"] as? Int == 2)
        #expect(first["code"] == nil)
        // Confirmed with the token, and a bad key: 0 inserted (two revised), a partial failure.
        let token = try #require(first["revisionToken"] as? String)
        let revised = try await publish([(1, today - 144, 144), (2, today - 288, 144), (3, today - 432, 145)], type: "confirmed", token: token)
        #expect(revised["status"] as? Int == 200)
        #expect(revised["insertedExposures"] as? Int == 0)
        #expect(revised["code"] as? String == "partial_failure")
        #expect((revised["warnings"] as? [String])?.count == 1)
        // A key too far from the onset: a warning, no code.
        let far = try await publish([(4, today - 144, 144), (5, today - 144 * 15, 144)], type: "confirmed", onset: today)
        #expect(far["insertedExposures"] as? Int == 1)
        #expect(far["code"] == nil)
        #expect((far["warnings"] as? [String])?.count == 1)
        // Every key too far from the onset: 200, nothing inserted, the warnings, no revision token
        // (nothing to revise), and nothing stored.
        let allFar = try await publish([(7, today - 144 * 15, 144), (8, today - 144 * 15, 144)], type: "confirmed", onset: today)
        #expect(allFar["status"] as? Int == 200)
        #expect(allFar["insertedExposures"] as? Int == 0)
        #expect(allFar["code"] == nil)
        #expect((allFar["warnings"] as? [String])?.count == 2)
        #expect(allFar["revisionToken"] as? String == "")
        #expect(try database.count("exposure") == 3)
        // Only bad keys: 400.
        #expect(try await publish([(6, today - 144, 0)], type: "confirmed")["status"] as? Int == 400)
    }
}
