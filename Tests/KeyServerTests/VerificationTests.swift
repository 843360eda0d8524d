// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import GaendTestSupport
import KeyServer
import Testing

/// Codes → tokens → certificates, and the key server's check of a certificate against a publish.
@Suite(.postgreSQLServer) struct VerificationTests {
    static let now = PublishValidatorTests.now

    @Test func jwtSignaturesVerifyAndTamperingDoesNot() throws {
        let key = try ECDSAPrivateKey()
        let publicKey = try ECDSAPublicKey(pem: key.publicKeyPEM)
        for _ in 0..<20 {  // r or s with a high bit or leading zeros: the DER ↔ raw conversion both ways
            let token = try JWT.sign(["sub": "x", "exp": Self.now.seconds + 10], keyID: "v1", key: key)
            #expect(try JWT.verify(token, key: publicKey, now: Self.now.seconds)["sub"] as? String == "x")
            var parts = token.split(separator: ".").map(String.init)
            parts[1] = parts[1].replacingOccurrences(of: "e", with: "f")
            #expect(throws: JWT.Failure.self) { try JWT.verify(parts.joined(separator: "."), key: publicKey, now: Self.now.seconds) }
        }
        let expired = try JWT.sign(["exp": Self.now.seconds], keyID: "v1", key: key)
        #expect(throws: JWT.Failure(reason: "expired")) { try JWT.verify(expired, key: publicKey, now: Self.now.seconds) }
        let other = try ECDSAPublicKey(pem: try ECDSAPrivateKey().publicKeyPEM)
        #expect(throws: JWT.Failure(reason: "the signature does not verify")) {
            try JWT.verify(try JWT.sign([:], keyID: "v1", key: key), key: other, now: Self.now.seconds)
        }
    }

    @Test(arguments: Engine.available)
    func aCodeBecomesOneTokenAndOneCertificateThatThePublishCheckAccepts(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let signing = try ECDSAPrivateKey()
        let verifier = try Verifier(database.verification, signingKey: signing, codeKey: try TestDatabase.codeKey())
        let code = try await verifier.issueCode(testType: "likely", symptomDate: UTCDay(parsing: "2026-11-18"), testDate: nil, now: Self.now).code
        #expect(code.count == 8)
        let verified = try await verifier.verify(code: code, accept: ["confirmed", "likely"], now: Self.now)
        #expect(verified.testType == "likely")
        #expect(verified.symptomDate == "2026-11-18")
        await #expect { try await verifier.verify(code: code, accept: [], now: Self.now) } throws: { ($0 as? Verifier.Refusal)?.code == "code_invalid" }
        await #expect { try await verifier.verify(code: "12345678", accept: [], now: Self.now) } throws: { ($0 as? Verifier.Refusal)?.code == "code_invalid" }
        let late = try await verifier.issueCode(testType: "confirmed", symptomDate: nil, testDate: nil, now: Self.now).code
        await #expect { try await verifier.verify(code: late, accept: [], now: Self.now.adding(seconds: 15 * 60)) } throws: {
            ($0 as? Verifier.Refusal)?.code == "code_expired"
        }
        let negative = try await verifier.issueCode(testType: "negative", symptomDate: nil, testDate: nil, now: Self.now).code
        await #expect { try await verifier.verify(code: negative, accept: ["confirmed"], now: Self.now) } throws: {
            ($0 as? Verifier.Refusal)?.code == "unsupported_test_type"
        }

        // The device's side: the HMAC of its keys with a secret it keeps, as gaend computes it.
        let keys = [
            #"{"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": 2991888, "rollingPeriod": 144, "transmissionRisk": 3}"#,
            #"{"key": "dPCphLzfG4uzXneNimkPRQ==", "rollingStartNumber": 2992032, "rollingPeriod": 72, "transmissionRisk": 5}"#,
        ]
        let secret = Array(1...16).map(UInt8.init)
        let cleartext = "dPCphLzfG4uzXneNimkPRQ==.2992032.72.5,z2Cx9hdz2SlxZ8GEgqTYpA==.2991888.144.3"
        let hmac = Digest.hmacSHA256(key: secret, message: Array(cleartext.utf8))
        await #expect { try await verifier.certificate(token: verified.token, keysHMAC: "AAAA", now: Self.now) } throws: {
            ($0 as? Verifier.Refusal)?.code == "hmac_invalid"
        }
        let certificate = try await verifier.certificate(token: verified.token, keysHMAC: Data(hmac).base64EncodedString(), now: Self.now)
        await #expect { try await verifier.certificate(token: verified.token, keysHMAC: Data(hmac).base64EncodedString(), now: Self.now) } throws: {
            ($0 as? Verifier.Refusal)?.code == "token_invalid"
        }

        let settings = verifier.settings
        let check = CertificateCheck(verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: settings.issuer, audience: settings.audience)
        func publish(_ keyList: [String], certificate: String, secret: [UInt8]) throws(PublishError) -> CertificateCheck.Claims {
            let body =
                #"{"temporaryExposureKeys": [\#(keyList.joined(separator: ","))], "healthAuthorityID": "ch.example", "verificationPayload": "\#(certificate)", "hmacKey": "\#(Data(secret).base64EncodedString())"}"#
            return try check.check(try PublishRequest(json: Array(body.utf8)), now: Self.now.seconds)
        }
        let claims = try publish(keys, certificate: certificate, secret: secret)
        #expect(claims.reportType == 2)
        #expect(claims.symptomOnsetInterval == Int64(UTCDay(parsing: "2026-11-18")!.firstInterval!.rawValue))
        // Another set of keys, another secret, a forged or expired certificate: refused.
        #expect(throws: PublishError.self) { try publish([keys[0]], certificate: certificate, secret: secret) }
        #expect(throws: PublishError.self) { try publish(keys, certificate: certificate, secret: Array(repeating: 7, count: 16)) }
        let forged = try JWT.sign(
            ["iss": settings.issuer, "aud": settings.audience, "tekmac": Data(hmac).base64EncodedString()], keyID: "v1", key: try ECDSAPrivateKey())
        #expect(throws: PublishError(.verificationCertificateInvalid, "the certificate the signature does not verify")) {
            try publish(keys, certificate: forged, secret: secret)
        }
        #expect(throws: PublishError.self) {
            try check.check(try PublishRequest(json: Array(#"{"temporaryExposureKeys": [\#(keys[0])], "healthAuthorityID": "x"}"#.utf8)), now: Self.now.seconds)
        }
    }
}

extension VerificationTests {
    /// The reference server's own HMAC vectors (pkg/verification/utils_test.go): the check accepts
    /// the 4-field form, and the 3-field form only when every risk is 0.
    @Test func theReferenceHMACVectorsPass() throws {
        let signing = try ECDSAPrivateKey()
        let check = CertificateCheck(verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: "i", audience: "a")
        let secret = Data(Array(1...16).map(UInt8.init)).base64EncodedString()
        func accepts(_ tekmac: String, risks: (Int, Int)) throws -> Bool {
            let certificate = try JWT.sign(["iss": "i", "aud": "a", "tekmac": tekmac, "reportType": "confirmed"], keyID: "v1", key: signing)
            let body = #"""
                {"temporaryExposureKeys": [{"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": 1, "rollingPeriod": 144, "transmissionRisk": \#(risks.0)},
                 {"key": "dPCphLzfG4uzXneNimkPRQ==", "rollingStartNumber": 144, "rollingPeriod": 144, "transmissionRisk": \#(risks.1)}],
                 "healthAuthorityID": "x", "verificationPayload": "\#(certificate)", "hmacKey": "\#(secret)"}
                """#
            do {
                _ = try check.check(try PublishRequest(json: Array(body.utf8)), now: Self.now.seconds)
                return true
            } catch {
                return false
            }
        }
        #expect(try accepts("2u1nHt5WWurJytFLF3xitNzM99oNrad2y4YGOL53AeY=", risks: (3, 5)))
        #expect(try accepts("mFNI9zhTA17n4ndd1Vu5tsn4XQX0gPrIKyjeh/9noUE=", risks: (0, 0)))
        #expect(try accepts("J9S7xVebH/66dm14wGsIcAnSUR3PHD4NtDQEOGZbDUo=", risks: (0, 0)))
        #expect(try !accepts("J9S7xVebH/66dm14wGsIcAnSUR3PHD4NtDQEOGZbDUo=", risks: (3, 5)))
    }
}

extension VerificationTests {
    /// The certificate's report types (pkg/api/v1/verification_types.go's ValidReportTypes):
    /// user-report is a self-report; any other type, or none, makes the certificate invalid.
    @Test func certificateReportTypesAreTheReferencesOnly() throws {
        let signing = try ECDSAPrivateKey()
        let check = CertificateCheck(verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: "i", audience: "a")
        let secret = Array(1...16).map(UInt8.init)
        let key = #"{"key": "z2Cx9hdz2SlxZ8GEgqTYpA==", "rollingStartNumber": 1, "rollingPeriod": 144, "transmissionRisk": 3}"#
        let tekmac = Data(Digest.hmacSHA256(key: secret, message: Array("z2Cx9hdz2SlxZ8GEgqTYpA==.1.144.3".utf8))).base64EncodedString()
        func reportType(_ type: String?) throws -> Int32? {
            var claims: [String: Any] = ["iss": "i", "aud": "a", "tekmac": tekmac]
            claims["reportType"] = type
            let body =
                #"{"temporaryExposureKeys": [\#(key)], "healthAuthorityID": "x", "verificationPayload": "\#(try JWT.sign(claims, keyID: "v1", key: signing))", "hmacKey": "\#(Data(secret).base64EncodedString())"}"#
            return try? check.check(try PublishRequest(json: Array(body.utf8)), now: Self.now.seconds).reportType
        }
        #expect(try reportType("confirmed") == 1)
        #expect(try reportType("likely") == 2)
        #expect(try reportType("user-report") == 3)
        #expect(try reportType("negative") == 5)
        #expect(try reportType("bogus") == nil)
        #expect(try reportType(nil) == nil)
    }

    /// `accept` as the reference's GetAcceptedTestTypes: omitted or empty is every type, the
    /// hierarchy, user-report, and an unknown value refused.
    @Test func acceptedTestTypesFollowTheHierarchy() throws {
        #expect(try Verifier.acceptedTestTypes(nil) == ["confirmed", "likely", "negative", "user-report"])
        #expect(try Verifier.acceptedTestTypes([String]()) == ["confirmed", "likely", "negative", "user-report"])
        #expect(try Verifier.acceptedTestTypes(["confirmed"]) == ["confirmed"])
        #expect(try Verifier.acceptedTestTypes(["likely"]) == ["confirmed", "likely"])
        #expect(try Verifier.acceptedTestTypes(["NEGATIVE"]) == ["confirmed", "likely", "negative"])
        #expect(try Verifier.acceptedTestTypes(["user-report"]) == ["confirmed", "user-report"])
        #expect(throws: Verifier.Refusal.self) { try Verifier.acceptedTestTypes(["positive"]) }
        #expect(throws: Verifier.Refusal.self) { try Verifier.acceptedTestTypes("confirmed") }
    }

    /// Over HTTP: a code of a type the device does not accept answers `unsupported_test_type`
    /// with 412 and stays usable; an unknown accept value is `invalid_test_type`; no accept takes all.
    @Test(arguments: Engine.available)
    func verifyAnswersUnsupportedTestTypeWith412(_ engine: Engine) async throws {
        let database = try TestDatabase(engine)
        let signing = try ECDSAPrivateKey()
        let verifier = try Verifier(database.verification, signingKey: signing, codeKey: try TestDatabase.codeKey())
        let api = KeyServerAPI(
            store: try KeyStore(database.keys), verifier: verifier,
            check: CertificateCheck(verifierKey: try ECDSAPublicKey(pem: signing.publicKeyPEM), issuer: "i", audience: "a"),
            settings: KeyServerAPI.Settings(healthAuthorities: ["x"], deviceAPIKey: "device", exportDirectory: database.directory.path),
            clock: { Self.now })
        func verify(_ body: String) async throws -> (Int, String?) {
            let response = await api.handle(
                .init(method: "POST", path: "/api/verify", headers: ["X-API-Key": "device", "Content-Type": "application/json"], body: Array(body.utf8)))
            return (response.status, (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["errorCode"] as? String)
        }
        let likely = try await verifier.issueCode(testType: "likely", symptomDate: nil, testDate: nil, now: Self.now).code
        #expect(try await verify(#"{"code": "\#(likely)", "accept": ["confirmed"]}"#) == (412, "unsupported_test_type"))
        #expect(try await verify(#"{"code": "\#(likely)", "accept": ["positive"]}"#) == (400, "invalid_test_type"))
        #expect(try await verify(#"{"code": "\#(likely)"}"#) == (200, nil))
        let report = try await verifier.issueCode(testType: "user-report", symptomDate: nil, testDate: nil, now: Self.now).code
        #expect(try await verify(#"{"code": "\#(report)", "accept": ["likely"]}"#) == (412, "unsupported_test_type"))
        #expect(try await verify(#"{"code": "\#(report)", "accept": ["user-report"]}"#) == (200, nil))
    }
}
