// SPDX-License-Identifier: GPL-3.0-or-later

/// A D-Bus error: a reply of type ERROR from a peer, or a failure of this side named the way a
/// peer would name it. Handlers of exported methods throw it to reply with that name.
package struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    package var name: Name
    package var message: String

    package init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    package var description: String { "\(name.rawValue): \(message)" }

    /// An error name (`org.freedesktop.DBus.Error.NoReply`, `org.bluez.Error.Failed`...).
    package struct Name: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        package var rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package init(stringLiteral value: String) { rawValue = value }
        package var description: String { rawValue }

        package static let failed: Name = "org.freedesktop.DBus.Error.Failed"
        package static let noReply: Name = "org.freedesktop.DBus.Error.NoReply"
        package static let timeout: Name = "org.freedesktop.DBus.Error.Timeout"
        package static let disconnected: Name = "org.freedesktop.DBus.Error.Disconnected"
        package static let serviceUnknown: Name = "org.freedesktop.DBus.Error.ServiceUnknown"
        package static let nameHasNoOwner: Name = "org.freedesktop.DBus.Error.NameHasNoOwner"
        package static let accessDenied: Name = "org.freedesktop.DBus.Error.AccessDenied"
        package static let unknownObject: Name = "org.freedesktop.DBus.Error.UnknownObject"
        package static let unknownInterface: Name = "org.freedesktop.DBus.Error.UnknownInterface"
        package static let unknownMethod: Name = "org.freedesktop.DBus.Error.UnknownMethod"
        package static let unknownProperty: Name = "org.freedesktop.DBus.Error.UnknownProperty"
        package static let propertyReadOnly: Name = "org.freedesktop.DBus.Error.PropertyReadOnly"
        package static let invalidArgs: Name = "org.freedesktop.DBus.Error.InvalidArgs"
        package static let invalidSignature: Name = "org.freedesktop.DBus.Error.InvalidSignature"
        package static let noMemory: Name = "org.freedesktop.DBus.Error.NoMemory"
        package static let limitsExceeded: Name = "org.freedesktop.DBus.Error.LimitsExceeded"
        package static let notSupported: Name = "org.freedesktop.DBus.Error.NotSupported"
    }
}
