// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// How a diagnosis was established, as a key file records it (`ReportType` in the schema).
package enum ReportType: Int32, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case unknown = 0
    case confirmedTest = 1
    case confirmedClinicalDiagnosis = 2
    case selfReport = 3
    /// Reserved for keys of people a confirmed case may have infected; disabled in matching.
    case recursive = 4
    /// The key's earlier report was withdrawn (a negative test after a clinical diagnosis).
    case revoked = 5

    package var description: String {
        switch self {
        case .unknown: return "unknown"
        case .confirmedTest: return "confirmed-test"
        case .confirmedClinicalDiagnosis: return "confirmed-clinical-diagnosis"
        case .selfReport: return "self-report"
        case .recursive: return "recursive"
        case .revoked: return "revoked"
        }
    }
}

/// A Temporary Exposure Key published as a diagnosis key, with the metadata a key file carries.
package struct DiagnosisKey: Hashable, Sendable {
    package var key: TemporaryExposureKey
    /// 0...8 (a file's value outside is clamped when read); deprecated by the API, still written by
    /// servers, read only by v1 scoring.
    package var transmissionRiskLevel: Int32
    package var reportType: ReportType
    /// As the file says it, or `nil` when it does not. Any value is kept (Google keeps the key);
    /// one outside −14...14 is scored as if the file did not say.
    package var daysSinceOnsetOfSymptoms: Int32?

    package init(key: TemporaryExposureKey, transmissionRiskLevel: Int32 = 0, reportType: ReportType = .unknown, daysSinceOnsetOfSymptoms: Int32? = nil) {
        self.key = key
        self.transmissionRiskLevel = transmissionRiskLevel
        self.reportType = reportType
        self.daysSinceOnsetOfSymptoms = daysSinceOnsetOfSymptoms
    }
}

/// A key of a file that was not taken, and why. Dropping a key never makes the file invalid.
package struct DroppedKey: Hashable, Sendable, CustomStringConvertible {
    /// Zero-based position among the file's keys (or its revised keys).
    package var index: Int
    package var revised: Bool
    package var reason: String

    package var description: String { "\(revised ? "revised key" : "key") \(index): \(reason)" }
}

/// Identifies a signing key: what a file's SignatureInfo names and what a client trusts.
package struct SignatureInfo: Hashable, Sendable, CustomStringConvertible {
    package var verificationKeyID: String
    package var verificationKeyVersion: String
    package var signatureAlgorithm: String
    /// Retired fields, shown by the inspector because old files still carry them.
    package var appBundleID: String
    package var androidPackage: String

    package init(
        verificationKeyID: String, verificationKeyVersion: String, signatureAlgorithm: String = SignatureInfo.ecdsaP256SHA256,
        appBundleID: String = "", androidPackage: String = ""
    ) {
        self.verificationKeyID = verificationKeyID
        self.verificationKeyVersion = verificationKeyVersion
        self.signatureAlgorithm = signatureAlgorithm
        self.appBundleID = appBundleID
        self.androidPackage = androidPackage
    }

    /// The OID of ECDSA with SHA-256, the algorithm GAEN files name.
    package static let ecdsaP256SHA256 = "1.2.840.10045.4.3.2"
    /// The OID of ECDSA with SHA-512, which Google's verifier accepts as well.
    package static let ecdsaP256SHA512 = "1.2.840.10045.4.3.4"

    package var description: String {
        "key id '\(verificationKeyID)' version '\(verificationKeyVersion)' algorithm '\(signatureAlgorithm)'"
    }
}
