// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import ENCrypto

/// The keys a replay gives the recording's transmitters: one temporary exposure key per
/// transmitter and UTC day, derived from both (SHA-256 of a label, the id and the day), so that a
/// replay is the same every time and two transmitters never share an RPI. Not `Sendable`: its
/// crypto contexts belong to the one task that replays.
package struct ReplayKeys {
    let crypto: ExposureKeyCrypto
    /// The metadata every transmitter's AEM carries (version 1.1 with this TX power).
    let metadata: BluetoothMetadata

    package init(txPower: Int8) throws {
        crypto = try ExposureKeyCrypto()
        metadata = .version1_1(txPower: txPower, calibrationConfidence: .lowest)
    }

    package static func key(transmitter: String, day: UTCDay) -> Bytes16 {
        let digest = Digest.sha256(Array("gaend replay\u{0}\(transmitter)\u{0}\(day.daysSinceEpoch)".utf8))
        return Bytes16(Array(digest.prefix(16)))!
    }

    /// What `transmitter` advertised at `time`: the RPI of the interval that holds it, and its AEM.
    package func payload(transmitter: String, at time: UnixTime) -> ExposureNotificationPayload? {
        guard let interval = ENIntervalNumber(containing: time) else { return nil }
        let (rpik, aemk) = crypto.keys(for: Self.key(transmitter: transmitter, day: UTCDay(containing: time)))
        let rpi = crypto.rpi(rpik: rpik, interval: interval)
        return ExposureNotificationPayload(rpi: rpi, aem: crypto.aem(for: metadata, aemk: aemk, rpi: rpi))
    }
}
