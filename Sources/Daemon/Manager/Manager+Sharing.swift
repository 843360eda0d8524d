// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
package import KeyFiles
import Logging

extension Manager {
    /// The verification flow and publishing for one test result: the code becomes a token
    /// (/api/verify), the keys' HMAC a certificate (/api/certificate), the keys are published with
    /// it, and the test result is marked shared. Keys are released only after the code verified.
    package func share(testResultID: String, code: String) async throws(ManagerError) {
        guard let sharing = settings.sharing else {
            throw .notConfigured("no verification or publish server is configured (verification-url, publish-url)")
        }
        guard let index = owner.testResults.firstIndex(where: { $0.id == testResultID }) else {
            throw .badParameter(field: "testResultId", problem: "no test result '\(testResultID)' (gaenctl test-result list)")
        }
        guard !code.isEmpty else { throw .badParameter(field: "code", problem: "the verification code is empty") }
        // Before the code is spent at the verification server.
        try requireTrustedClock()
        let result = owner.testResults[index]
        guard result.kind != .negative else { throw .badParameter(field: "testResultId", problem: "a negative test result is not shared") }
        let verification = VerificationClient(
            verifyURL: sharing.verificationURL + "/api/verify", certificateURL: sharing.verificationURL + "/api/certificate", apiKey: sharing.apiKey,
            transport: transport)
        let verified: VerificationClient.VerifiedCode
        do {
            verified = try await verification.verify(code: code)
        } catch {
            throw .verificationFailed(Self.explain(error, server: "the verification server", refused: "the code"))
        }
        let reportType: ReportType = verified.testType == "likely" ? .confirmedClinicalDiagnosis : .confirmedTest
        // In test mode the current key is shared whole, as GetTestDiagnosisKeys returns it (Apple's
        // developer flow), so a demo's contacts can be matched the same day.
        let released = try await settings.testMode ? testDiagnosisKeys() : diagnosisKeys()
        let keys = released.map { DiagnosisKey(key: $0, transmissionRiskLevel: 0, reportType: reportType) }
        guard !keys.isEmpty else { throw .failed("there are no keys to share yet") }
        var secret = [UInt8](repeating: 0, count: 32)
        for index in secret.indices { secret[index] = UInt8.random(in: 0...255) }
        let certificate: String
        do {
            certificate = try await verification.certificate(token: verified.token, keysHMAC: TEKHMAC.compute(keys, secret: secret))
        } catch {
            throw .verificationFailed(Self.explain(error, server: "the verification server", refused: "the certificate"))
        }
        let onset = result.symptomOnset.flatMap { ENIntervalNumber(containing: $0) }
        let publisher = PublishClient(publishURL: sharing.publishURL, healthAuthorityID: sharing.healthAuthorityID, transport: transport)
        let published: PublishClient.Result
        do {
            published = try await publisher.publish(
                keys: keys, certificate: certificate, hmacSecret: secret, symptomOnsetInterval: onset, revisionToken: owner.revisionToken)
        } catch {
            throw .publishFailed(Self.explain(error, server: "the key server", refused: "the keys"))
        }
        // The server's own words on keys it dropped (symptoms too long ago, a key too old): logged,
        // escaped, whatever else happens.
        let warnings = published.warnings.map(OutsideText.escaped)
        for warning in warnings { logger.warning("the key server dropped a key", metadata: ["warning": "\(warning)"]) }
        var next = owner
        // Shared only when the server stored a key: with none stored nobody can be warned, and the
        // owner is told so, the result left shareable (issue 53: it was reported "shared").
        next.testResults[index].shared = published.insertedExposures > 0
        // A token too long to keep is dropped: the next share then publishes without revising.
        next.revisionToken = published.revisionToken.flatMap { $0.utf8.count <= OwnerState.maximumRevisionTokenBytes ? $0 : nil } ?? owner.revisionToken
        try next.save(to: dataDirectory)
        owner = next
        guard published.insertedExposures > 0 else {
            let why = warnings.isEmpty ? "" : ": " + warnings.joined(separator: "; ")
            throw .publishFailed("the key server accepted the request but stored none of the \(keys.count) keys, so nobody can be warned\(why)")
        }
        logger.info("diagnosis keys shared", metadata: ["keys": "\(keys.count)", "inserted": "\(published.insertedExposures)"])
    }

    /// What went wrong, as the person sharing needs to hear it: a server that could not be
    /// reached is not one that refused (they would try another code).
    /// The server's code comes with its own words (`error`), which say why (issue 53: a key server
    /// refusing four keys of one start said only `bad_request`); both escaped, as a server's bytes.
    package static func explain(_ error: ClientError, server: String, refused what: String) -> String {
        switch error {
        case .http(let cause) where cause.isUnreachable: "\(server) is unreachable: \(cause)"
        case .server(_, _, let code?, let message):
            "\(server) refused \(what): \(OutsideText.escaped(code))" + (message.map { " (\(OutsideText.escaped($0)))" } ?? "")
        default: "\(server) refused \(what): \(error)"
        }
    }
}
