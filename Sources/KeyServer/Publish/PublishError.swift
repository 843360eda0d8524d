// SPDX-License-Identifier: GPL-3.0-or-later

/// A refused publish request, with the reference server's error code (exposure-notifications-server
/// pkg/api/v1/exposure_types.go) and the HTTP status it answers with.
package struct PublishError: Error, Equatable, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case badRequest = "bad_request"
        case unknownHealthAuthorityID = "unknown_health_authority_id"
        case verificationCertificateInvalid = "health_authority_verification_certificate_invalid"
        case missingRevisionToken = "missing_revision_token"
        case invalidRevisionToken = "invalid_revision_token"
        case keyAlreadyRevised = "key_already_revised"
        case invalidReportTypeTransition = "invalid_report_type_transition"
        case internalError = "internal_error"
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var status: Int {
        switch code {
        case .internalError: 500
        case .verificationCertificateInvalid: 401
        default: 400
        }
    }

    package var description: String { "\(code.rawValue): \(message)" }
}
