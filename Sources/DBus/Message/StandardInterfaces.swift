// SPDX-License-Identifier: GPL-3.0-or-later

/// The names the D-Bus specification gives the bus itself and the standard interfaces, spelled
/// once ("Message Bus Specification", "Standard Interfaces").
package enum StandardInterfaces {
    /// The bus's own name, which is also the interface of its methods and signals.
    package static let bus = "org.freedesktop.DBus"
    /// The bus's object path.
    package static let busPath = "/org/freedesktop/DBus"
    package static let properties = "org.freedesktop.DBus.Properties"
    package static let objectManager = "org.freedesktop.DBus.ObjectManager"
    package static let introspectable = "org.freedesktop.DBus.Introspectable"
    package static let peer = "org.freedesktop.DBus.Peer"
    /// What libdbus itself signals on a connection (Disconnected).
    package static let local = "org.freedesktop.DBus.Local"
    /// The annotation that says a property announces no change.
    package static let emitsChangedSignal = "org.freedesktop.DBus.Property.EmitsChangedSignal"
}
