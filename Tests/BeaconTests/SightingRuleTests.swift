// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import ENCore
import GaendTestSupport
import HCI
import HCIBeacon
import Replay
import Testing

/// One report-to-sighting rule (issue 48): the scanner (`HCIRadio.report`) and the captures
/// replayed from phones (`CaptureSightings`) read the same reports alike, a scan response with
/// 0xFD6F service data a sighting as GMS counts it (docs/radio.md, "Scan responses").
struct SightingRuleTests {
    static let payload = ExposureNotificationPayload(
        rpi: RollingProximityIdentifier(Bytes16([UInt8](repeating: 0x5A, count: 16))!), aem: AssociatedEncryptedMetadata((1, 2, 3, 4)))
    static let gaen = payload.advertisingData(includingFlags: false)
    /// A heart-rate service's data, not GAEN.
    static let other: [UInt8] = [0x03, 0x16, 0x0D, 0x18]
    /// 0xFD6F service data of 19 bytes: claims GAEN, is not.
    static let malformed: [UInt8] = [0x16, 0x16, 0x6F, 0xFD] + [UInt8](repeating: 1, count: 19)

    /// Legacy PDU types 0 ADV_IND, 2 ADV_SCAN_IND (Android's), 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    static let reports: [(data: [UInt8], eventType: UInt8)] = [
        (gaen, 0x03), (gaen, 0x02), (gaen, 0x00), (gaen, 0x04), (other, 0x04), (other, 0x02), (malformed, 0x04), (malformed, 0x03),
    ]

    @Test func aScanResponseWithExposureDataIsASighting() {
        let response = AdvertisingReport(
            eventType: 0x04, extended: false, addressType: 1, address: BluetoothAddress([1, 2, 3, 4, 5, 0xC6])!, data: Self.gaen, rssi: -61)
        #expect(response.isScanResponse)
        #expect(HCIRadio.report(response) == .sighting(Sighting(payload: Self.payload, rssi: -61, address: response.address)))
        // An extended report's scan-response bit, on a legacy scannable PDU (properties 0x1A).
        var extended = response
        extended.extended = true
        extended.eventType = 0x001A
        #expect(extended.isScanResponse)
        #expect(HCIRadio.report(extended) == .sighting(Sighting(payload: Self.payload, rssi: -61, address: response.address)))
        var empty = response
        empty.data = []
        #expect(HCIRadio.report(empty) == .other)
    }

    @Test func theScannerAndTheCapturesReadEveryReportAlike() throws {
        let directory = try TemporaryDirectory()
        var capture = CaptureWriter()
        let start = UnixTime.vectorDay.adding(seconds: 3600)
        for (index, report) in Self.reports.enumerated() {
            capture.hear(data: report.data, eventType: report.eventType, rssi: -50 - Int8(index), at: start.adding(seconds: Int64(index)))
        }
        try capture.write(to: directory.path + "/r.btsnoop")
        let replayed = try CaptureSightings(path: directory.path + "/r.btsnoop", receiver: "r")

        let scanned = Self.reports.enumerated().map { index, report in
            HCIRadio.report(
                AdvertisingReport(
                    eventType: UInt16(report.eventType), extended: false, addressType: 1, address: BluetoothAddress([1, 2, 3, 4, 5, 0xC6])!,
                    data: report.data, rssi: -50 - Int8(index)))
        }
        let sightings = scanned.compactMap { report -> Sighting? in
            if case .sighting(let sighting) = report { return sighting }
            return nil
        }
        #expect(sightings.count == 4)
        #expect(replayed.heard.map(\.rssi) == sightings.map(\.rssi))
        #expect(replayed.heard.allSatisfy { $0.payload == Self.payload })
        #expect(replayed.otherReports.count == scanned.count - sightings.count)
        #expect(scanned.filter { $0 == .malformed }.count == 2)
    }
}
