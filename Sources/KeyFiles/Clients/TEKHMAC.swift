// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation

/// The HMAC that binds a verification certificate to the keys being published, built exactly as the
/// reference verification and key servers build it: each key as
/// `base64(key).rollingStartNumber.rollingPeriod.transmissionRisk`, the strings sorted by their
/// base64 text (not by key bytes), joined with commas, HMAC-SHA256 under the device's random secret.
package enum TEKHMAC {
    /// The cleartext the HMAC is computed over.
    package static func cleartext(_ keys: [DiagnosisKey], includeTransmissionRisk: Bool = true) -> String {
        keys.map { key in
            let base64 = Data(key.key.keyData.bytes).base64EncodedString()
            var fields = "\(base64).\(key.key.rollingStartIntervalNumber.rawValue).\(key.key.rollingPeriod)"
            if includeTransmissionRisk { fields += ".\(key.transmissionRiskLevel)" }
            return (base64, fields)
        }
        .sorted { $0.0 < $1.0 }
        .map(\.1)
        .joined(separator: ",")
    }

    /// HMAC-SHA256 of the cleartext under `secret`.
    package static func compute(_ keys: [DiagnosisKey], secret: [UInt8], includeTransmissionRisk: Bool = true) -> [UInt8] {
        Digest.hmacSHA256(key: secret, message: Array(cleartext(keys, includeTransmissionRisk: includeTransmissionRisk).utf8))
    }
}
