// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation

/// The verification server's device API: a code becomes a token (`POST /api/verify`), and the token
/// plus the HMAC of the keys becomes a certificate (`POST /api/certificate`) that the key server accepts.
package struct VerificationClient: Sendable {
    package var verifyURL: String
    package var certificateURL: String
    package var apiKey: String
    private let exchange: JSONExchange

    package init(verifyURL: String, certificateURL: String, apiKey: String, transport: any HTTPTransport, timeout: Duration = .seconds(30)) {
        self.verifyURL = verifyURL
        self.certificateURL = certificateURL
        self.apiKey = apiKey
        exchange = JSONExchange(transport: transport, timeout: timeout)
    }

    /// What `/api/verify` answers for a valid code.
    package struct VerifiedCode: Equatable, Sendable {
        /// confirmed, likely, negative or user-report.
        package var testType: String
        /// YYYY-MM-DD, if the health authority gave one.
        package var symptomDate: String?
        package var testDate: String?
        /// The token to exchange for a certificate.
        package var token: String

        package init(testType: String, symptomDate: String?, testDate: String?, token: String) {
            self.testType = testType
            self.symptomDate = symptomDate
            self.testDate = testDate
            self.token = token
        }
    }

    /// Exchanges a verification code for a token.
    package func verify(code: String, acceptedTestTypes: [String] = ["confirmed", "likely", "negative"]) async throws(ClientError) -> VerifiedCode {
        let object = try await exchange.post(verifyURL, body: ["code": code, "accept": acceptedTestTypes], headers: [("X-API-Key", apiKey)])
        guard let token = object["token"] as? String, !token.isEmpty else {
            throw .unexpectedResponse(url: verifyURL, reason: "no token")
        }
        return VerifiedCode(
            testType: object["testtype"] as? String ?? "", symptomDate: object["symptomDate"] as? String,
            testDate: object["testDate"] as? String, token: token)
    }

    /// Exchanges a token and the keys' HMAC (32 bytes) for a verification certificate (a JWT).
    package func certificate(token: String, keysHMAC: [UInt8]) async throws(ClientError) -> String {
        guard keysHMAC.count == 32 else { throw .local("the keys' HMAC is \(keysHMAC.count) bytes, not 32") }
        let object = try await exchange.post(
            certificateURL, body: ["token": token, "ekeyhmac": Data(keysHMAC).base64EncodedString()], headers: [("X-API-Key", apiKey)])
        guard let certificate = object["certificate"] as? String, !certificate.isEmpty else {
            throw .unexpectedResponse(url: certificateURL, reason: "no certificate")
        }
        return certificate
    }

    /// A request that looks like a real one and is discarded (`X-Chaff: 1`), so that an observer
    /// cannot tell from traffic that this device's owner tested positive.
    package func chaff() async {
        _ = try? await exchange.post(verifyURL, body: ["code": "", "accept": ["confirmed"]], headers: [("X-API-Key", apiKey)], chaff: true)
    }
}
