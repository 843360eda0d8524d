// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import KeyFiles

/// What gaend reads from the health authority's servers besides key files: the exposure
/// configuration, the export index, and the verification and publish servers' answers (read by
/// the clients that sharing uses). The first byte picks which; for an answer, the second picks
/// its HTTP status.
enum ServerAnswerFuzzing {
    static let statuses = [200, 400, 401, 500]
    static let indexURL = "https://keys.example/exposureKeyExport-CH/index.txt"

    /// Answers every request with the same response.
    struct Answer: HTTPTransport {
        var response: HTTPResponse
        func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse { response }
    }

    static let key: DiagnosisKey = {
        guard
            let key = try? TemporaryExposureKey(
                keyData: Bytes16(words: (0x0707_0707_0707_0707, 0x0707_0707_0707_0707)), rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_939_616))
        else {
            fatalError("gaend-fuzz: the sample key is not one")
        }
        return DiagnosisKey(key: key, transmissionRiskLevel: 0, reportType: .confirmedTest)
    }()

    @Sendable static func answer(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let body = Array(bytes.dropFirst(2))
        let transport = Answer(response: HTTPResponse(status: statuses[Int(bytes[1]) % statuses.count], headers: [:], body: body))
        switch bytes[0] % 4 {
        case 0:
            // As a fetched configuration and one passed to DetectExposures are read.
            _ = try? ExposureConfiguration(json: Data(body))
        case 1:
            _ = try? KeyFileDownloader.parseIndex(body, baseURL: nil, indexURL: indexURL)
        case 2:
            let client = VerificationClient(
                verifyURL: "https://verify.example/api/verify", certificateURL: "https://verify.example/api/certificate", apiKey: "device-key",
                transport: transport)
            KeyServerFuzzing.wait {
                _ = try? await client.verify(code: "12345678")
                _ = try? await client.certificate(token: "token", keysHMAC: [UInt8](repeating: 1, count: 32))
            }
        default:
            let client = PublishClient(publishURL: "https://keys.example/v1/publish", healthAuthorityID: "ch.example", transport: transport)
            KeyServerFuzzing.wait { _ = try? await client.publish(keys: [key], certificate: "a.b.c", hmacSecret: [UInt8](repeating: 2, count: 32)) }
        }
    }
}
