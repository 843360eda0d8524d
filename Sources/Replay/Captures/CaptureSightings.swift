// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import HCI

/// What one receiver's capture holds for a replay: the GAEN payloads it heard (when, how strongly)
/// and the ones it advertised itself (which make it the transmitter of what others heard).
package struct CaptureSightings: Sendable {
    /// One GAEN advertisement heard: the capture's time, the payload (RPI and AEM), the raw RSSI.
    package struct Heard: Sendable, Equatable {
        package var time: UnixTime
        package var payload: ExposureNotificationPayload
        package var rssi: Int8

        package init(time: UnixTime, payload: ExposureNotificationPayload, rssi: Int8) {
            self.time = time
            self.payload = payload
            self.rssi = rssi
        }
    }

    /// The capture's file name without its extension.
    package var receiver: String
    package var heard: [Heard] = []
    /// When each advertising report without a GAEN payload came (a scan window counts them).
    package var otherReports: [UnixTime] = []
    /// The host's LE Set (Extended) Scan Enable commands, in order: when, and on or off. A capture
    /// of the host's side holds them; its scans are then exactly the host's. A scan is on from the
    /// command that switches it on, and off at the completion of the one that switches it off:
    /// what the controller reported until then is the scan's, as gaend's scanner counts it.
    package var scanSwitches: [(time: UnixTime, on: Bool)] = []
    /// A switch off sent and not yet completed.
    private var offSent: UnixTime?
    /// Every payload the receiver's host told its controller to advertise.
    package var advertised: Set<ExposureNotificationPayload> = []
    /// Packets read, and GAEN reports without a usable RSSI (127, "not available").
    package var packets = 0
    package var withoutRSSI = 0

    /// The 8 bytes before a GAEN payload in an advertising frame: the 16-bit UUID list with 0xFD6F,
    /// then the service data's length, type and UUID (`03 03 6F FD 17 16 6F FD`).
    static let framePrefix: [UInt8] = [0x03, 0x03, 0x6F, 0xFD, 0x17, 0x16, 0x6F, 0xFD]
    /// The commands a host sets advertising data with: LE Set Advertising Data, LE Set Extended
    /// Advertising Data, and the vendor command Samsung's stack used on the phones of experiment 34
    /// that had no extended advertising (SOURCES.md).
    static let advertisingDataOpcodes: Set<UInt16> = [0x2008, 0x2037, 0xFD54]
    /// LE Set Scan Enable and LE Set Extended Scan Enable: their first parameter is on or off.
    static let scanEnableOpcodes: Set<UInt16> = [0x200C, 0x2042]
    /// At most this many sightings per capture (a day of a crowd heard continuously).
    package static let maximumHeard = 5_000_000

    /// Reads the capture at `path` whole.
    package init(path: String, receiver: String) throws(CaptureError) {
        self.receiver = receiver
        var reader = try BTSnoopReader(path: path)
        while let packet = try reader.next() {
            packets += 1
            switch packet.bytes[0] {
            case 0x01: takeCommand(packet.bytes, at: packet.time)
            case 0x04: try takeEvent(packet, record: reader.records, file: reader.name)
            default: continue
            }
        }
        // A capture that ends before the switch off completed.
        if let sent = offSent { switched(on: false, at: sent) }
    }

    /// An advertising-data command: the payload after the frame's prefix, wherever the command's
    /// layout puts the frame.
    private mutating func takeCommand(_ bytes: [UInt8], at time: UnixTime) {
        guard bytes.count >= 4 else { return }
        let opcode = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
        if Self.scanEnableOpcodes.contains(opcode), bytes.count >= 5, scanSwitches.count < Self.maximumHeard {
            if bytes[4] != 0 {
                if let sent = offSent { switched(on: false, at: sent) }
                switched(on: true, at: time)
            } else {
                offSent = time
            }
            return
        }
        guard Self.advertisingDataOpcodes.contains(opcode) else { return }
        let parameters = bytes[4...]
        guard let start = Self.firstIndex(of: Self.framePrefix, in: parameters), start + Self.framePrefix.count + 20 <= parameters.endIndex else { return }
        let value = Array(parameters[(start + Self.framePrefix.count)..<(start + Self.framePrefix.count + 20)])
        if let payload = ExposureNotificationPayload(serviceDataValue: value) { advertised.insert(payload) }
    }

    /// An event: each advertising report is read by the scanner's rule (`AdvertisingReport.content`),
    /// so a capture's sightings are the ones gaend would have kept. An event the HCI parser refuses
    /// is not a report gaend would have taken either, and is skipped; a report whose GAEN service
    /// data is malformed is counted with the other reports, as the scanner counts it apart.
    private mutating func takeEvent(_ packet: CapturedPacket, record: Int, file: String) throws(CaptureError) {
        guard let event = try? HCIEvent(packet: Array(packet.bytes.dropFirst())) else { return }
        if case .commandComplete(_, let opcode, _) = event, Self.scanEnableOpcodes.contains(opcode.rawValue), offSent != nil {
            switched(on: false, at: packet.time)
            return
        }
        guard case .advertisingReports(let reports) = event else { return }
        for report in reports {
            guard case .exposure(let payload) = report.content else {
                guard otherReports.count < Self.maximumHeard else {
                    throw CaptureError(file: file, record: record, problem: "more than \(Self.maximumHeard) other advertising reports in one capture")
                }
                otherReports.append(packet.time)
                continue
            }
            // Kept: gaend's scanner keeps a sighting without an RSSI too (no attenuation, but heard);
            // the replay's rows leave it out, as the CSV refuses 127.
            if report.rssi == 127 { withoutRSSI += 1 }
            guard heard.count < Self.maximumHeard else {
                throw CaptureError(file: file, record: record, problem: "more than \(Self.maximumHeard) GAEN sightings in one capture")
            }
            heard.append(Heard(time: packet.time, payload: payload, rssi: report.rssi))
        }
    }

    /// A repeated switch changes nothing (a host may enable again to restart filtering).
    private mutating func switched(on: Bool, at time: UnixTime) {
        offSent = nil
        if scanSwitches.last?.on != on, scanSwitches.last != nil || on { scanSwitches.append((time, on)) }
    }

    static func firstIndex(of pattern: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var index = bytes.startIndex
        while index + pattern.count <= bytes.endIndex {
            if bytes[index..<(index + pattern.count)].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }
}

/// Several receivers' captures as the replay's rows: a sighting's transmitter is the capture whose
/// host advertised that payload; payloads no capture advertised are one `unknown` transmitter.
package enum CaptureReplay {
    package static let unknownTransmitter = "unknown"

    /// The rows, in time order, with `offsetSeconds` added to the captures' times (a capture on
    /// local time: CEST is −7,200) and only those from `from` to `until` (UTC) kept. A receiver
    /// hearing its own payload (a reflection of its own advertising) is left out, and so is a
    /// sighting without an RSSI (127), which a replay cannot weigh.
    package static func rows(
        _ captures: [CaptureSightings], offsetSeconds: Int64 = 0, from: UnixTime? = nil, until: UnixTime? = nil
    ) -> [RecordedSighting] {
        var owner = [ExposureNotificationPayload: String]()
        for capture in captures {
            for payload in capture.advertised { owner[payload] = capture.receiver }
        }
        var rows = [RecordedSighting]()
        for capture in captures {
            for heard in capture.heard where heard.rssi != 127 {
                let time = heard.time.adding(seconds: offsetSeconds)
                if let from, time < from { continue }
                if let until, time > until { continue }
                let transmitter = owner[heard.payload] ?? unknownTransmitter
                guard transmitter != capture.receiver else { continue }
                rows.append(RecordedSighting(time: time, receiver: capture.receiver, transmitter: transmitter, rssi: heard.rssi))
            }
        }
        return rows.sorted { ($0.time, $0.receiver, $0.transmitter) < ($1.time, $1.receiver, $1.transmitter) }
    }
}
