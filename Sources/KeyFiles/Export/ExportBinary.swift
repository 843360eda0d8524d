// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation

/// Reads and writes `export.bin`: the 16-byte header, then a proto2 `TemporaryExposureKeyExport`.
package enum ExportBinary {
    /// "EK Export v1" padded with spaces to 16 bytes, compared byte for byte (never trimmed).
    package static let header: [UInt8] = Array("EK Export v1    ".utf8)

    /// Parses `bytes` and validates each key, with `ExportReader`: for tools, which show a file
    /// whole (detection streams the keys instead). An invalid key is dropped and counted; only a
    /// bad header, undecodable protobuf or too many keys make the whole file unusable.
    package static func parse(_ bytes: [UInt8]) throws(KeyFileError) -> KeyExport {
        try ExportReader(bytes).export()
    }

    struct Invalid: Error {
        var text: String
    }

    /// One key against the schema's ranges; proto2 defaults apply (an absent rolling period is 144).
    ///
    /// Two fields never drop a key, because Google's matching keeps such keys: a
    /// `transmission_risk_level` outside 0...8 is clamped into it (only v1 scoring reads it, and
    /// indexes its scores by it), and `days_since_onset_of_symptoms` is kept as it is, whatever its
    /// value (scoring treats one beyond ±14 as missing, as GMS's `ExposureWindowUtils` does).
    static func validate(_ key: RawKey) -> Result<DiagnosisKey, Invalid> {
        guard key.keyData.count == 16 else {
            return .failure(Invalid(text: "key_data is \(key.keyData.count) bytes, not 16"))
        }
        guard let start = key.rollingStartIntervalNumber, start > 0 else {
            return .failure(Invalid(text: "rolling_start_interval_number is missing or \(key.rollingStartIntervalNumber ?? 0)"))
        }
        let period = key.rollingPeriod ?? 144
        guard (1...144).contains(period) else {
            return .failure(Invalid(text: "rolling_period \(period) is outside 1...144"))
        }
        let keyData = key.keyData.withUnsafeBytes { Bytes16(loadingFrom: $0.baseAddress!) }
        // Both ranges were checked above, so the key is valid by construction.
        let tek = try! TemporaryExposureKey(
            keyData: keyData, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(start)), rollingPeriod: UInt32(period))
        return .success(
            DiagnosisKey(
                key: tek, transmissionRiskLevel: min(max(key.transmissionRiskLevel, 0), 8), reportType: key.reportType ?? .unknown,
                daysSinceOnsetOfSymptoms: key.daysSinceOnsetOfSymptoms))
    }
}

extension SignatureInfo {
    var message: PBSignatureInfo {
        var info = PBSignatureInfo()
        // An empty key id is left out, not written empty: Google's verifier tells a signature
        // without verification_key_id (checked with the single key of a key set) from one naming
        // an id, by the field's presence.
        if !verificationKeyID.isEmpty { info.verificationKeyID = verificationKeyID }
        info.verificationKeyVersion = verificationKeyVersion
        info.signatureAlgorithm = signatureAlgorithm
        if !appBundleID.isEmpty { info.appBundleID = appBundleID }
        if !androidPackage.isEmpty { info.androidPackage = androidPackage }
        return info
    }
}
