// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Foundation

/// A btsnoop capture written for a test: the header, then records of packets (with their H4 type
/// under datalink 1002, as Android writes it; without, their kind in the flags, under the Linux
/// monitor's 2001, as `btmon -w` writes it).
package struct CaptureWriter {
    package static let h4: UInt32 = 1002
    package static let monitor: UInt32 = 2001

    package var bytes: [UInt8]

    package init(datalink: UInt32 = h4) {
        bytes = Array("btsnoop\0".utf8) + Self.be32(1) + Self.be32(datalink)
    }

    package static func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    package static func be64(_ value: Int64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (56 - 8 * UInt64($0))) }
    }

    package mutating func record(_ packet: [UInt8], at time: UnixTime, original: Int? = nil, flags: UInt32 = 0) {
        let stamp = time.milliseconds * 1000 + 0x00dc_ddb3_0f2f_8000
        bytes += Self.be32(UInt32(original ?? packet.count)) + Self.be32(UInt32(packet.count)) + Self.be32(flags) + Self.be32(0) + Self.be64(stamp) + packet
    }

    /// LE Set Advertising Data (0x2008): length, then the 31-byte frame.
    package mutating func advertise(_ payload: ExposureNotificationPayload, at time: UnixTime) {
        var frame = payload.advertisingData()
        let length = UInt8(frame.count)
        frame += [UInt8](repeating: 0, count: 31 - frame.count)
        record([0x01, 0x08, 0x20, 32, length] + frame, at: time)
    }

    /// An LE Advertising Report of `payload` (as Android sends it: no Flags), at `rssi`.
    package mutating func hear(_ payload: ExposureNotificationPayload, rssi: Int8, at time: UnixTime) {
        hear(data: payload.advertisingData(includingFlags: false), eventType: 0x03, rssi: rssi, at: time)
    }

    /// A legacy LE Advertising Report of any data: `eventType` 0x00–0x03 an advertisement's PDU
    /// type, 0x04 a scan response.
    package mutating func hear(data: [UInt8], eventType: UInt8, rssi: Int8, at time: UnixTime) {
        let report: [UInt8] = [0x02, 1, eventType, 0x01] + [1, 2, 3, 4, 5, 0xC6] + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        record([0x04, 0x3E, UInt8(report.count)] + report, at: time)
    }

    package func write(to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
}
