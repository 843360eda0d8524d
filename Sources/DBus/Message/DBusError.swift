// SPDX-License-Identifier: GPL-3.0-or-later

/// A D-Bus error: a reply of type ERROR from a peer, or a failure of this side named the way a
/// peer would name it. Handlers of exported methods throw it to reply with that name.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: Name
    public var message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name.rawValue): \(message)" }

    /// An error name (`org.freedesktop.DBus.Error.NoReply`, `org.bluez.Error.Failed`...).
    public struct Name: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public static let failed: Name = "org.freedesktop.DBus.Error.Failed"
        public static let noReply: Name = "org.freedesktop.DBus.Error.NoReply"
        public static let timeout: Name = "org.freedesktop.DBus.Error.Timeout"
        public static let disconnected: Name = "org.freedesktop.DBus.Error.Disconnected"
        public static let serviceUnknown: Name = "org.freedesktop.DBus.Error.ServiceUnknown"
        public static let nameHasNoOwner: Name = "org.freedesktop.DBus.Error.NameHasNoOwner"
        public static let accessDenied: Name = "org.freedesktop.DBus.Error.AccessDenied"
        public static let unknownObject: Name = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface: Name = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownMethod: Name = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownProperty: Name = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly: Name = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let invalidArgs: Name = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let invalidSignature: Name = "org.freedesktop.DBus.Error.InvalidSignature"
        public static let noMemory: Name = "org.freedesktop.DBus.Error.NoMemory"
        public static let limitsExceeded: Name = "org.freedesktop.DBus.Error.LimitsExceeded"
        public static let notSupported: Name = "org.freedesktop.DBus.Error.NotSupported"
    }
}
