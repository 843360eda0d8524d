// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// One advertising report from either report event.
package struct AdvertisingReport: Hashable, Sendable {
    /// Legacy: the PDU type (0 ADV_IND … 3 ADV_NONCONN_IND, 4 SCAN_RSP). Extended: event properties.
    package var eventType: UInt16
    package var extended: Bool
    /// 0 public, 1 random, 2/3 resolved identities.
    package var addressType: UInt8
    package var address: BluetoothAddress
    package var data: [UInt8]
    /// dBm; 127 means not available.
    package var rssi: Int8
    /// Extended reports only: the advertiser's TX power, 127 if not available.
    package var txPower: Int8?

    package init(eventType: UInt16, extended: Bool, addressType: UInt8, address: BluetoothAddress, data: [UInt8], rssi: Int8, txPower: Int8? = nil) {
        self.eventType = eventType
        self.extended = extended
        self.addressType = addressType
        self.address = address
        self.data = data
        self.rssi = rssi
        self.txPower = txPower
    }

    /// Whether the advertisement was a scan response rather than an advertisement.
    package var isScanResponse: Bool {
        extended ? eventType & 0x0008 != 0 : eventType == 0x04
    }
}

/// The HCI events gaend reads. Everything else is kept as `.other` and ignored by the driver.
package enum HCIEvent: Hashable, Sendable {
    case commandComplete(allowedPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8])
    case commandStatus(status: HCIStatus, allowedPackets: UInt8, opcode: HCIOpcode)
    case hardwareError(code: UInt8)
    case advertisingReports([AdvertisingReport])
    case other(code: UInt8, parameters: [UInt8])

    static let commandCompleteCode: UInt8 = 0x0E
    static let commandStatusCode: UInt8 = 0x0F
    static let hardwareErrorCode: UInt8 = 0x10
    static let leMetaCode: UInt8 = 0x3E

    /// The status of a Command Complete (its first return parameter), if it has one.
    package var completionStatus: HCIStatus? {
        if case .commandComplete(_, _, let parameters) = self, let first = parameters.first { return HCIStatus(rawValue: first) }
        return nil
    }
}

/// Why an event packet could not be read. Parsing is bounded and total: a truncated or lying event
/// is one of these, never a crash or an out-of-bounds read.
package enum HCIParseError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(what: String, needed: Int, available: Int)
    case lengthMismatch(declared: Int, actual: Int)
    case invalidReportCount(Int)

    package var description: String {
        switch self {
        case .truncated(let what, let needed, let available): return "\(what): needs \(needed) bytes, \(available) remain"
        case .lengthMismatch(let declared, let actual): return "event declares \(declared) parameter bytes but carries \(actual)"
        case .invalidReportCount(let count): return "report count \(count) is outside 1...25"
        }
    }
}

extension HCIEvent {
    /// Parses an event packet without its H4 type byte: code, parameter length, parameters.
    package init(packet bytes: [UInt8]) throws(HCIParseError) {
        var reader = ByteReader(bytes)
        let code = try reader.byte("event header")
        let length = Int(try reader.byte("event header"))
        guard reader.remaining == length else { throw .lengthMismatch(declared: length, actual: reader.remaining) }
        switch code {
        case Self.commandCompleteCode:
            let allowed = try reader.byte("Command Complete")
            let opcode = HCIOpcode(rawValue: try reader.uint16("Command Complete"))
            self = .commandComplete(allowedPackets: allowed, opcode: opcode, returnParameters: reader.rest())
        case Self.commandStatusCode:
            let status = HCIStatus(rawValue: try reader.byte("Command Status"))
            let allowed = try reader.byte("Command Status")
            self = .commandStatus(status: status, allowedPackets: allowed, opcode: HCIOpcode(rawValue: try reader.uint16("Command Status")))
        case Self.hardwareErrorCode:
            self = .hardwareError(code: try reader.byte("Hardware Error"))
        case Self.leMetaCode:
            let subevent = try reader.byte("LE Meta")
            switch subevent {
            case 0x02: self = .advertisingReports(try Self.legacyReports(&reader))
            case 0x0D: self = .advertisingReports(try Self.extendedReports(&reader))
            default: self = .other(code: code, parameters: Array(bytes[2...]))
            }
        default:
            self = .other(code: code, parameters: reader.rest())
        }
    }

    /// LE Advertising Report: num, then per report event type, address type, address, length, data, RSSI.
    /// (Core 4.x interleaved the fields of several reports in arrays; controllers send one report per
    /// event in practice, and 5.x defines the per-report layout read here.)
    private static func legacyReports(_ reader: inout ByteReader) throws(HCIParseError) -> [AdvertisingReport] {
        let count = Int(try reader.byte("LE Advertising Report"))
        guard (1...25).contains(count) else { throw .invalidReportCount(count) }
        var reports = [AdvertisingReport]()
        for _ in 0..<count {
            let type = try reader.byte("report")
            let addressType = try reader.byte("report")
            let address = BluetoothAddress(littleEndian: try reader.bytes(6, "report address"))
            let length = Int(try reader.byte("report"))
            guard length <= 31 else { throw .truncated(what: "legacy advertising data of \(length) bytes (at most 31)", needed: length, available: 31) }
            let data = Array(try reader.bytes(length, "report data"))
            let rssi = Int8(bitPattern: try reader.byte("report RSSI"))
            reports.append(
                AdvertisingReport(eventType: UInt16(type), extended: false, addressType: addressType, address: address, data: data, rssi: rssi, txPower: nil))
        }
        return reports
    }

    /// LE Extended Advertising Report: num, then per report properties (2), address type, address,
    /// PHYs, SID, TX power, RSSI, interval (2), direct address type and address, length, data.
    private static func extendedReports(_ reader: inout ByteReader) throws(HCIParseError) -> [AdvertisingReport] {
        let count = Int(try reader.byte("LE Extended Advertising Report"))
        guard (1...10).contains(count) else { throw .invalidReportCount(count) }
        var reports = [AdvertisingReport]()
        for _ in 0..<count {
            let properties = try reader.uint16("extended report")
            let addressType = try reader.byte("extended report")
            let address = BluetoothAddress(littleEndian: try reader.bytes(6, "extended report address"))
            _ = try reader.bytes(3, "extended report PHYs and SID")
            let tx = Int8(bitPattern: try reader.byte("extended report TX power"))
            let rssi = Int8(bitPattern: try reader.byte("extended report RSSI"))
            _ = try reader.bytes(2 + 1 + 6, "extended report interval and direct address")
            let length = Int(try reader.byte("extended report"))
            let data = Array(try reader.bytes(length, "extended report data"))
            reports.append(
                AdvertisingReport(eventType: properties, extended: true, addressType: addressType, address: address, data: data, rssi: rssi, txPower: tx))
        }
        return reports
    }
}

/// Reads bytes with a bounds check on every step.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func byte(_ what: String) throws(HCIParseError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(what: what, needed: 1, available: 0) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16(_ what: String) throws(HCIParseError) -> UInt16 {
        let pair = try self.bytes(2, what)
        return UInt16(pair[pair.startIndex]) | UInt16(pair[pair.startIndex + 1]) << 8
    }

    mutating func bytes(_ count: Int, _ what: String) throws(HCIParseError) -> ArraySlice<UInt8> {
        guard remaining >= count else { throw .truncated(what: what, needed: count, available: remaining) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}
