// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation

/// Reads and writes `export.bin`: the 16-byte header, then a proto2 `TemporaryExposureKeyExport`.
package enum ExportBinary {
    /// "EK Export v1" padded with spaces to 16 bytes, compared byte for byte (never trimmed).
    package static let header: [UInt8] = Array("EK Export v1    ".utf8)

    /// Parses `bytes` and validates each key: for tools, which show a file whole (detection streams
    /// the keys instead). An invalid key is dropped and counted; only a bad header, undecodable
    /// protobuf or too many keys make the whole file unusable.
    package static func parse(_ bytes: [UInt8]) throws(KeyFileError) -> KeyExport {
        try read(ExportInput(bytes))
    }

    /// Every key and revised key of `input` kept, in one reading (`ExportSummary`), for tools.
    static func read(_ input: ExportInput) throws(KeyFileError) -> KeyExport {
        var keys = [DiagnosisKey]()
        var revisedKeys = [DiagnosisKey]()
        let summary = try ExportSummary(reading: input) { key, revised in
            if revised { revisedKeys.append(key) } else { keys.append(key) }
        }
        var export = summary.header
        export.droppedCount = try summary.check().dropped
        export.dropped = summary.dropped
        export.keys = keys
        export.revisedKeys = revisedKeys
        return export
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
        let keyData = Bytes16(loadingFrom: key.keyData.baseAddress!)
        // Both ranges were checked above, so the key is valid by construction.
        let tek = try! TemporaryExposureKey(
            keyData: keyData, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(start)), rollingPeriod: UInt32(period))
        return .success(
            DiagnosisKey(
                key: tek, transmissionRiskLevel: min(max(key.transmissionRiskLevel, 0), 8), reportType: key.reportType ?? .unknown,
                daysSinceOnsetOfSymptoms: key.daysSinceOnsetOfSymptoms))
    }
}

extension ExportBinary {
    /// `value` as a protobuf varint: for files made by hand (tests, hostile files of gaen-bench).
    package static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes = [UInt8]()
        repeat {
            bytes.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value != 0
        return bytes
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
