// SPDX-License-Identifier: GPL-3.0-or-later

/// One advertising-data structure: a type octet and its data (Core Specification Vol 3, Part C, §11).
public struct ADStructure: Hashable, Sendable {
    public var type: ADType
    public var data: [UInt8]

    public init(type: ADType, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// The structure on the air: length (type + data), type, data.
    public var encoded: [UInt8] { [UInt8(data.count + 1), type.rawValue] + data }
}

/// An AD type code from the Bluetooth Assigned Numbers. Unknown codes are kept as they are.
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(rawValue: 0x01)
    public static let incomplete16BitServiceUUIDs = ADType(rawValue: 0x02)
    public static let complete16BitServiceUUIDs = ADType(rawValue: 0x03)
    public static let incomplete128BitServiceUUIDs = ADType(rawValue: 0x06)
    public static let complete128BitServiceUUIDs = ADType(rawValue: 0x07)
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    public static let completeLocalName = ADType(rawValue: 0x09)
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    public static let serviceData16BitUUID = ADType(rawValue: 0x16)
    public static let appearance = ADType(rawValue: 0x19)
    public static let serviceData128BitUUID = ADType(rawValue: 0x21)
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)

    /// The Assigned Numbers name, or the hex code.
    public var description: String {
        switch self {
        case .flags: return "Flags"
        case .incomplete16BitServiceUUIDs: return "Incomplete List of 16-bit Service UUIDs"
        case .complete16BitServiceUUIDs: return "Complete List of 16-bit Service UUIDs"
        case .incomplete128BitServiceUUIDs: return "Incomplete List of 128-bit Service UUIDs"
        case .complete128BitServiceUUIDs: return "Complete List of 128-bit Service UUIDs"
        case .shortenedLocalName: return "Shortened Local Name"
        case .completeLocalName: return "Complete Local Name"
        case .txPowerLevel: return "Tx Power Level"
        case .serviceData16BitUUID: return "Service Data - 16-bit UUID"
        case .appearance: return "Appearance"
        case .serviceData128BitUUID: return "Service Data - 128-bit UUID"
        case .manufacturerSpecificData: return "Manufacturer Specific Data"
        default: return "0x" + Hex.encode([rawValue])
        }
    }
}
