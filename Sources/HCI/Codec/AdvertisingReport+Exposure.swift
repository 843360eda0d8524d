// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// What an advertising report holds for Exposure Notification: the one report-to-sighting rule,
/// which the scanner (HCIBeacon's `HCIRadio.report`) and the captures replayed from phones
/// (Replay's `CaptureSightings`) both follow (issue 48: the two copies disagreed on scan responses).
package enum ReportContent: Hashable, Sendable {
    /// 0xFD6F service data that parses: a sighting.
    case exposure(ExposureNotificationPayload)
    /// Anything else: another service, no service data.
    case other
    /// 0xFD6F service data that does not parse.
    case malformed
}

extension AdvertisingReport {
    /// The report's Exposure Notification content, whatever its PDU type: a scan response that
    /// carries 0xFD6F service data is a sighting as an advertisement is. GMS decides so:
    /// `BleScannerImpl.onScanResult` (google/exposure-notifications-internals) reads the service
    /// data from the `ScanRecord` and never looks at the event type, and Android's stack
    /// (`btm_ble_gap.cc`, `btm_ble_process_adv_pkt_cont`) builds that record from an advertisement
    /// and its scan response together. gaend scans passively, so it is sent none; the phones'
    /// captures, scanned actively, hold none with 0xFD6F data in 67,234 scan responses
    /// (docs/radio.md, "Scan responses").
    package var content: ReportContent {
        do {
            guard let payload = try ExposureNotificationPayload(parsing: data) else { return .other }
            return .exposure(payload)
        } catch {
            return .malformed
        }
    }
}
