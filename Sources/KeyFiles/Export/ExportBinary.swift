// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import Foundation
import SwiftProtobuf

/// Reads and writes `export.bin`: the 16-byte header, then a proto2 `TemporaryExposureKeyExport`.
public enum ExportBinary {
    /// "EK Export v1" padded with spaces to 16 bytes, compared byte for byte (never trimmed).
    public static let header: [UInt8] = Array("EK Export v1    ".utf8)

    /// Parses `bytes` and validates each key. An invalid key is dropped and counted; only a bad
    /// header, undecodable protobuf or too many keys make the whole file unusable.
    public static func parse(_ bytes: [UInt8]) throws(KeyFileError) -> KeyExport {
        guard bytes.count >= header.count, bytes.prefix(header.count).elementsEqual(header) else { throw .badHeader }
        let message: PBTemporaryExposureKeyExport
        do {
            message = try PBTemporaryExposureKeyExport(serializedBytes: [UInt8](bytes[header.count...]))
        } catch {
            throw .malformed("export.bin: \(error)")
        }
        let total = message.keys.count + message.revisedKeys.count
        guard total <= KeyFileLimits.maximumKeys else { throw .tooManyKeys(total) }
        var export = KeyExport(
            startTimestamp: message.startTimestamp, endTimestamp: message.endTimestamp, region: message.region,
            batchNumber: message.batchNum, batchSize: message.batchSize, hasBatchNumber: message.hasBatchNum, hasBatchSize: message.hasBatchSize,
            signatureInfos: message.signatureInfos.map(SignatureInfo.init))
        export.keys.reserveCapacity(message.keys.count)
        for (index, key) in message.keys.enumerated() {
            switch validate(key) {
            case .success(let valid): export.keys.append(valid)
            case .failure(let reason): export.dropped.append(DroppedKey(index: index, revised: false, reason: reason.text))
            }
        }
        for (index, key) in message.revisedKeys.enumerated() {
            switch validate(key) {
            case .success(let valid): export.revisedKeys.append(valid)
            case .failure(let reason): export.dropped.append(DroppedKey(index: index, revised: true, reason: reason.text))
            }
        }
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
    static func validate(_ key: PBTemporaryExposureKey) -> Result<DiagnosisKey, Invalid> {
        guard key.keyData.count == 16 else {
            return .failure(Invalid(text: "key_data is \(key.keyData.count) bytes, not 16"))
        }
        guard key.hasRollingStartIntervalNumber, key.rollingStartIntervalNumber > 0 else {
            return .failure(Invalid(text: "rolling_start_interval_number is missing or \(key.rollingStartIntervalNumber)"))
        }
        guard (1...144).contains(key.rollingPeriod) else {
            return .failure(Invalid(text: "rolling_period \(key.rollingPeriod) is outside 1...144"))
        }
        let reportType: ReportType
        if key.hasReportType {
            guard let known = ReportType(rawValue: Int32(key.reportType.rawValue)) else {
                return .failure(Invalid(text: "report_type \(key.reportType.rawValue) is not a known report type"))
            }
            reportType = known
        } else {
            reportType = .unknown
        }
        let keyData = key.keyData.withUnsafeBytes { Bytes16(loadingFrom: $0.baseAddress!) }
        // Both ranges were checked above, so the key is valid by construction.
        let tek = try! TemporaryExposureKey(
            keyData: keyData, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(key.rollingStartIntervalNumber)),
            rollingPeriod: UInt32(key.rollingPeriod))
        return .success(
            DiagnosisKey(
                key: tek, transmissionRiskLevel: min(max(key.transmissionRiskLevel, 0), 8), reportType: reportType,
                daysSinceOnsetOfSymptoms: key.hasDaysSinceOnsetOfSymptoms ? key.daysSinceOnsetOfSymptoms : nil))
    }
}

extension SignatureInfo {
    init(_ message: PBSignatureInfo) {
        self.init(
            verificationKeyID: message.verificationKeyID, verificationKeyVersion: message.verificationKeyVersion,
            signatureAlgorithm: message.signatureAlgorithm, appBundleID: message.appBundleID,
            androidPackage: message.androidPackage)
    }

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
