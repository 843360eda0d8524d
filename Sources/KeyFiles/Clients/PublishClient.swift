// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Foundation

/// The key server's `POST /v1/publish`: the diagnosis keys with the verification certificate and the
/// HMAC secret that lets the server check the certificate belongs to these keys.
package struct PublishClient: Sendable {
    package var publishURL: String
    package var healthAuthorityID: String
    private let exchange: JSONExchange

    package init(publishURL: String, healthAuthorityID: String, transport: any HTTPTransport, timeout: Duration = .seconds(30)) {
        self.publishURL = publishURL
        self.healthAuthorityID = healthAuthorityID
        exchange = JSONExchange(transport: transport, timeout: timeout)
    }

    package struct Result: Equatable, Sendable {
        /// Keep it for the next publish of this device: the server needs it to accept revised keys.
        package var revisionToken: String?
        package var insertedExposures: Int
        package var warnings: [String]
        /// `partial_failure`: some keys were refused, the rest accepted.
        package var partialFailure: String?
    }

    /// Publishes `keys`. `hmacSecret` is the secret the certificate's `tekmac` was computed with.
    package func publish(
        keys: [DiagnosisKey], certificate: String, hmacSecret: [UInt8], symptomOnsetInterval: ENIntervalNumber? = nil,
        revisionToken: String? = nil, traveler: Bool = false
    ) async throws(ClientError) -> Result {
        var body: [String: Any] = [
            "temporaryExposureKeys": keys.map(Self.json),
            "healthAuthorityID": healthAuthorityID,
            "verificationPayload": certificate,
            "hmacKey": Data(hmacSecret).base64EncodedString(),
        ]
        if let symptomOnsetInterval { body["symptomOnsetInterval"] = Int(symptomOnsetInterval.rawValue) }
        if let revisionToken { body["revisionToken"] = revisionToken }
        if traveler { body["traveler"] = true }
        let object = try await exchange.post(publishURL, body: body)
        return Result(
            revisionToken: object["revisionToken"] as? String, insertedExposures: object["insertedExposures"] as? Int ?? 0,
            warnings: object["warnings"] as? [String] ?? [],
            partialFailure: (object["code"] as? String) == "partial_failure" ? (object["error"] as? String ?? "partial_failure") : nil)
    }

    /// A publish-shaped request the server discards (`X-Chaff: 1`).
    package func chaff() async {
        _ = try? await exchange.post(publishURL, body: ["temporaryExposureKeys": [], "healthAuthorityID": healthAuthorityID], chaff: true)
    }

    static func json(_ key: DiagnosisKey) -> [String: Any] {
        [
            "key": Data(key.key.keyData.bytes).base64EncodedString(),
            "rollingStartNumber": Int(key.key.rollingStartIntervalNumber.rawValue),
            "rollingPeriod": Int(key.key.rollingPeriod),
            "transmissionRisk": Int(key.transmissionRiskLevel),
        ]
    }
}
