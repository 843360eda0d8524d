// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCrypto
import Foundation

/// The key server's check of a publish's verification certificate (the reference's
/// internal/verification): ES256 by a trusted verifier key, issuer and audience as configured, in
/// its lifetime, and `tekmac` equal to the HMAC of the request's keys under its `hmacKey`
/// (keys sorted by their base64 text, `key.start.period.risk` joined by commas; the 3-field form
/// is accepted when every risk is 0).
package struct CertificateCheck: Sendable {
    package var verifierKey: ECDSAPublicKey
    package var issuer: String
    package var audience: String

    package init(verifierKey: ECDSAPublicKey, issuer: String, audience: String) {
        self.verifierKey = verifierKey
        self.issuer = issuer
        self.audience = audience
    }

    /// The certificate's report types and the export files' (export.proto): negative is REVOKED.
    package static let reportTypes: [String: Int32] = ["confirmed": 1, "likely": 2, "user-report": 3, "negative": 5]

    /// What a valid certificate says: the report type (1 confirmed, 2 likely, 3 self-report,
    /// 5 negative = revoked)
    /// and the symptom onset interval, if it has one.
    package struct Claims: Sendable, Equatable {
        package var reportType: Int32
        package var symptomOnsetInterval: Int64?
    }

    package func check(_ request: PublishRequest, now: Int64) throws(PublishError) -> Claims {
        func refuse(_ why: String) -> PublishError { PublishError(.verificationCertificateInvalid, why) }
        guard let certificate = request.verificationPayload else { throw refuse("verificationPayload is missing") }
        guard let secretText = request.hmacKey, let secret = PublishValidator.decodeBase64(secretText), !secret.isEmpty else {
            throw refuse("hmacKey is missing or not base64")
        }
        let claims: [String: Any]
        do {
            claims = try JWT.verify(certificate, key: verifierKey, now: now)
        } catch {
            throw refuse("the certificate \(error.reason)")
        }
        guard claims["iss"] as? String == issuer else { throw refuse("the certificate's issuer is not trusted") }
        let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String] ?? [])
        guard audiences.contains(audience) else { throw refuse("the certificate is for another audience") }
        guard let tekmac = (claims["tekmac"] as? String).flatMap(PublishValidator.decodeBase64) else { throw refuse("the certificate has no tekmac") }
        let sorted = request.keys.sorted { $0.key < $1.key }
        let four = sorted.map { "\($0.key).\($0.rollingStartNumber).\($0.rollingPeriod).\($0.transmissionRisk)" }.joined(separator: ",")
        var candidates = [four]
        if sorted.allSatisfy({ $0.transmissionRisk == 0 }) {
            candidates.append(sorted.map { "\($0.key).\($0.rollingStartNumber).\($0.rollingPeriod)" }.joined(separator: ","))
        }
        guard candidates.contains(where: { Digest.hmacSHA256(key: secret, message: Array($0.utf8)) == tekmac }) else {
            throw refuse("the keys do not match the certificate's HMAC")
        }
        // The reference's ValidReportTypes (pkg/api/v1/verification_types.go): anything else,
        // or none, makes the certificate invalid.
        guard let type = claims["reportType"] as? String, let reportType = Self.reportTypes[type] else {
            throw refuse("the certificate's reportType is not confirmed, likely, negative or user-report")
        }
        return Claims(reportType: reportType, symptomOnsetInterval: (claims["symptomOnsetInterval"] as? NSNumber)?.int64Value)
    }
}
