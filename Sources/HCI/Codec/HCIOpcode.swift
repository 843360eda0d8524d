// SPDX-License-Identifier: GPL-3.0-or-later

/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), sent little-endian. The corresponding C
/// macro is `cmd_opcode_pack(ogf, ocf)`.
package struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }
    package init(ogf: UInt16, ocf: UInt16) { rawValue = (ogf << 10) | (ocf & 0x03FF) }

    package var ogf: UInt16 { rawValue >> 10 }
    package var ocf: UInt16 { rawValue & 0x03FF }

    // Controller and baseband (OGF 0x03), informational (0x04), LE controller (0x08).
    package static let setEventMask = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    package static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    package static let readLocalVersionInformation = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    package static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    package static let leReadLocalSupportedFeatures = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    package static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    package static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    package static let leReadAdvertisingChannelTxPower = HCIOpcode(ogf: 0x08, ocf: 0x0007)
    package static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    package static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    package static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    package static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    package static let leSetAdvertisingSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0035)
    package static let leSetExtendedAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0036)
    package static let leSetExtendedAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0037)
    package static let leSetExtendedAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x0039)
    package static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    package static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    package var description: String { String(format4: rawValue) }
}

extension String {
    /// `0x` and four lowercase hex digits.
    init(format4 value: UInt16) {
        let digits = String(value, radix: 16)
        self = "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
