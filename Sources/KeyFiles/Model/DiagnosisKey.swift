// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore

/// How a diagnosis was established, as a key file records it (`ReportType` in the schema).
public enum ReportType: Int32, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case unknown = 0
    case confirmedTest = 1
    case confirmedClinicalDiagnosis = 2
    case selfReport = 3
    /// Reserved for keys of people a confirmed case may have infected; disabled in matching.
    case recursive = 4
    /// The key's earlier report was withdrawn (a negative test after a clinical diagnosis).
    case revoked = 5

    public var description: String {
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
public struct DiagnosisKey: Hashable, Sendable {
    public var key: TemporaryExposureKey
    /// 0...8 (a file's value outside is clamped when read); deprecated by the API, still written by
    /// servers, read only by v1 scoring.
    public var transmissionRiskLevel: Int32
    public var reportType: ReportType
    /// As the file says it, or `nil` when it does not. Any value is kept (Google keeps the key);
    /// one outside −14...14 is scored as if the file did not say.
    public var daysSinceOnsetOfSymptoms: Int32?

    public init(key: TemporaryExposureKey, transmissionRiskLevel: Int32 = 0, reportType: ReportType = .unknown, daysSinceOnsetOfSymptoms: Int32? = nil) {
        self.key = key
        self.transmissionRiskLevel = transmissionRiskLevel
        self.reportType = reportType
        self.daysSinceOnsetOfSymptoms = daysSinceOnsetOfSymptoms
    }
}

/// A key of a file that was not taken, and why. Dropping a key never makes the file invalid.
public struct DroppedKey: Hashable, Sendable, CustomStringConvertible {
    /// Zero-based position among the file's keys (or its revised keys).
    public var index: Int
    public var revised: Bool
    public var reason: String

    public var description: String { "\(revised ? "revised key" : "key") \(index): \(reason)" }
}

/// Identifies a signing key: what a file's SignatureInfo names and what a client trusts.
public struct SignatureInfo: Hashable, Sendable, CustomStringConvertible {
    public var verificationKeyID: String
    public var verificationKeyVersion: String
    public var signatureAlgorithm: String
    /// Retired fields, shown by the inspector because old files still carry them.
    public var appBundleID: String
    public var androidPackage: String

    public init(
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
    public static let ecdsaP256SHA256 = "1.2.840.10045.4.3.2"
    /// The OID of ECDSA with SHA-512, which Google's verifier accepts as well.
    public static let ecdsaP256SHA512 = "1.2.840.10045.4.3.4"

    public var description: String {
        "key id '\(verificationKeyID)' version '\(verificationKeyVersion)' algorithm '\(signatureAlgorithm)'"
    }
}
