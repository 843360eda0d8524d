// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// An HCI command packet: opcode and parameters. `h4` is its bytes on an H4 transport.
package struct HCICommand: Hashable, Sendable {
    package var opcode: HCIOpcode
    package var parameters: [UInt8]

    package init(_ opcode: HCIOpcode, _ parameters: [UInt8] = []) {
        precondition(parameters.count <= 255, "HCI command parameters are at most 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    /// `01 | opcode (LE) | length | parameters`.
    package var h4: [UInt8] {
        [0x01, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), UInt8(parameters.count)] + parameters
    }

    // MARK: The commands gaend sends

    package static let reset = HCICommand(.reset)
    package static let readLocalVersionInformation = HCICommand(.readLocalVersionInformation)
    package static let leReadLocalSupportedFeatures = HCICommand(.leReadLocalSupportedFeatures)
    package static let leReadAdvertisingChannelTxPower = HCICommand(.leReadAdvertisingChannelTxPower)

    package static func setEventMask(_ mask: UInt64) -> HCICommand { HCICommand(.setEventMask, littleEndian(mask, bytes: 8)) }
    package static func leSetEventMask(_ mask: UInt64) -> HCICommand { HCICommand(.leSetEventMask, littleEndian(mask, bytes: 8)) }

    /// The random address, least significant byte first as on the air.
    package static func leSetRandomAddress(_ address: BluetoothAddress) -> HCICommand {
        HCICommand(.leSetRandomAddress, address.littleEndianBytes)
    }

    /// Advertising parameters. Intervals are in 0.625 ms units (200 ms = 0x0140).
    package static func leSetAdvertisingParameters(
        minimumInterval: UInt16, maximumInterval: UInt16, type: LegacyAdvertisingType, ownAddressRandom: Bool, channelMap: UInt8 = 0x07
    ) -> HCICommand {
        HCICommand(
            .leSetAdvertisingParameters,
            littleEndian(UInt64(minimumInterval), bytes: 2) + littleEndian(UInt64(maximumInterval), bytes: 2)
                + [type.rawValue, ownAddressRandom ? 0x01 : 0x00, 0x00] + [UInt8](repeating: 0, count: 6) + [channelMap, 0x00])
    }

    /// Up to 31 bytes of advertising data; the command always carries 31, zero-padded.
    package static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand {
        precondition(data.count <= 31, "legacy advertising data is at most 31 bytes")
        return HCICommand(.leSetAdvertisingData, [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    package static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(.leSetAdvertisingEnable, [enable ? 0x01 : 0x00])
    }

    /// Scan parameters; interval and window in 0.625 ms units.
    package static func leSetScanParameters(active: Bool, interval: UInt16, window: UInt16, ownAddressRandom: Bool = false) -> HCICommand {
        HCICommand(
            .leSetScanParameters,
            [active ? 0x01 : 0x00] + littleEndian(UInt64(interval), bytes: 2) + littleEndian(UInt64(window), bytes: 2)
                + [ownAddressRandom ? 0x01 : 0x00, 0x00])
    }

    /// For a scan's enable or disable (legacy or extended), which it is; nil for other commands.
    package var scanEnable: Bool? {
        guard opcode == .leSetScanEnable || opcode == .leSetExtendedScanEnable, let first = parameters.first else { return nil }
        return first != 0
    }

    package static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(.leSetScanEnable, [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00])
    }

    // MARK: Extended advertising and scanning (Core 5.0), used with legacy PDUs

    /// Parameters of advertising set `handle` sending legacy ADV_NONCONN_IND (properties 0x0010)
    /// from its random address on the 1M PHY; intervals in 0.625 ms units.
    package static func leSetExtendedAdvertisingParameters(handle: UInt8, minimumInterval: UInt16, maximumInterval: UInt16) -> HCICommand {
        HCICommand(
            .leSetExtendedAdvertisingParameters,
            [handle] + littleEndian(0x0010, bytes: 2) + littleEndian(UInt64(minimumInterval), bytes: 3)
                + littleEndian(UInt64(maximumInterval), bytes: 3) + [0x07, 0x01, 0x00] + [UInt8](repeating: 0, count: 6)
                + [0x00, 0x7F, 0x01, 0x00, 0x01, 0x00, 0x00])
    }

    package static func leSetAdvertisingSetRandomAddress(handle: UInt8, _ address: BluetoothAddress) -> HCICommand {
        HCICommand(.leSetAdvertisingSetRandomAddress, [handle] + address.littleEndianBytes)
    }

    /// The set's complete advertising data in one operation.
    package static func leSetExtendedAdvertisingData(handle: UInt8, _ data: [UInt8]) -> HCICommand {
        precondition(data.count <= 251, "one operation carries at most 251 bytes")
        return HCICommand(.leSetExtendedAdvertisingData, [handle, 0x03, 0x01, UInt8(data.count)] + data)
    }

    package static func leSetExtendedAdvertisingEnable(_ enable: Bool, handle: UInt8) -> HCICommand {
        HCICommand(.leSetExtendedAdvertisingEnable, [enable ? 0x01 : 0x00, 0x01, handle, 0x00, 0x00, 0x00])
    }

    /// Passive scanning on the 1M PHY; interval and window in 0.625 ms units.
    package static func leSetExtendedScanParameters(interval: UInt16, window: UInt16) -> HCICommand {
        HCICommand(.leSetExtendedScanParameters, [0x00, 0x00, 0x01, 0x00] + littleEndian(UInt64(interval), bytes: 2) + littleEndian(UInt64(window), bytes: 2))
    }

    package static func leSetExtendedScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(.leSetExtendedScanEnable, [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    static func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

/// Legacy advertising PDU types (LE Set Advertising Parameters, and the event type of legacy reports).
package enum LegacyAdvertisingType: UInt8, Sendable {
    case connectableUndirected = 0x00  // ADV_IND
    case connectableDirectedHighDuty = 0x01
    case scannableUndirected = 0x02  // ADV_SCAN_IND
    case nonConnectableUndirected = 0x03  // ADV_NONCONN_IND
    case connectableDirectedLowDuty = 0x04
}
