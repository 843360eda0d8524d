// SPDX-License-Identifier: GPL-3.0-or-later

/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), sent little-endian. The corresponding C
/// macro is `cmd_opcode_pack(ogf, ocf)`.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt16, ocf: UInt16) { rawValue = (ogf << 10) | (ocf & 0x03FF) }

    public var ogf: UInt16 { rawValue >> 10 }
    public var ocf: UInt16 { rawValue & 0x03FF }

    // Controller and baseband (OGF 0x03), informational (0x04), LE controller (0x08).
    public static let setEventMask = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public static let readLocalVersionInformation = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    public static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    public static let leReadLocalSupportedFeatures = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public static let leReadAdvertisingChannelTxPower = HCIOpcode(ogf: 0x08, ocf: 0x0007)
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0037)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x0039)
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    public var description: String { String(format4: rawValue) }
}

extension String {
    /// `0x` and four lowercase hex digits.
    init(format4 value: UInt16) {
        let digits = String(value, radix: 16)
        self = "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
