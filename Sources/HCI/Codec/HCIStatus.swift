// SPDX-License-Identifier: GPL-3.0-or-later

/// A controller's status code (Core Specification Vol 1 Part F), the ones gaend acts on by name.
package struct HCIStatus: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let success = HCIStatus(rawValue: 0x00)
    package static let unknownCommand = HCIStatus(rawValue: 0x01)
    package static let hardwareFailure = HCIStatus(rawValue: 0x03)
    package static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    package static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    package static let invalidParameters = HCIStatus(rawValue: 0x12)
    package static let unsupportedFeature = HCIStatus(rawValue: 0x11)
    package static let controllerBusy = HCIStatus(rawValue: 0x3A)

    package var description: String {
        let name: String
        switch self {
        case .success: name = "success"
        case .unknownCommand: name = "unknown HCI command"
        case .hardwareFailure: name = "hardware failure"
        case .memoryCapacityExceeded: name = "memory capacity exceeded"
        case .commandDisallowed: name = "command disallowed"
        case .invalidParameters: name = "invalid HCI command parameters"
        case .unsupportedFeature: name = "unsupported feature or parameter value"
        case .controllerBusy: name = "controller busy"
        default: name = "status"
        }
        let digits = String(rawValue, radix: 16)
        return "\(name) (0x\(digits.count == 1 ? "0" : "")\(digits))"
    }
}
