// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import HCI

/// What a controller sends: H4 bytes, HCI events, and the advertising data in their reports.
enum RadioFuzzing {
    /// One event packet without its H4 type byte, as `HCIController` gets it from the framer; the
    /// reports go on as the scanner takes them.
    @Sendable static func event(_ bytes: [UInt8]) {
        guard let event = try? HCIEvent(packet: bytes) else { return }
        _ = event.completionStatus
        if case .advertisingReports(let reports) = event {
            for report in reports {
                _ = report.isScanResponse
                scannerReads(report.data)
            }
        }
    }

    /// A byte stream as a transport reads it: the first byte says where the reads are cut, so
    /// packets that straddle reads are exercised; every event that comes out is parsed.
    @Sendable static func h4Stream(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let stream = bytes.dropFirst()
        let readSize = Int(first % 64) + 1
        var framer = H4Framer()
        var start = stream.startIndex
        while start < stream.endIndex {
            let end = min(start + readSize, stream.endIndex)
            do {
                for packet in try framer.append(stream[start..<end]) where packet.type == .event { event(packet.bytes) }
            } catch {
                // The transport resets the framer and reads on.
                framer.reset()
            }
            start = end
        }
    }

    /// Advertising or scan-response data, as the scanner and `gaenctl tools parse-adv` read it.
    @Sendable static func advertisingData(_ bytes: [UInt8]) {
        scannerReads(bytes)
        guard let data = try? AdvertisingData(parsing: bytes) else { return }
        _ = data.serviceUUIDs16
        _ = data.encoded
        for structure in data.structures { _ = structure.type.description }
    }

    /// What `Scanner.handle` takes from a report: its GAEN payload (the RPI keys the aggregate).
    static func scannerReads(_ data: [UInt8]) {
        guard let payload = try? ExposureNotificationPayload(parsing: data) else { return }
        _ = payload.rpi.description
        _ = payload.advertisingData()
    }
}
