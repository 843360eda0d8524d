// SPDX-License-Identifier: GPL-3.0-or-later

import DBus

/// Who sent a call, as the bus vouches for it: the uid the bus daemon read from the caller's
/// socket (org.freedesktop.DBus.GetConnectionUnixUser), never anything the caller says itself.
enum CallerIdentity {
    static func uid(of sender: String, on bus: DBusConnection) async throws -> UInt32? {
        try await bus.call(
            destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "GetConnectionUnixUser",
            [.string(sender)]
        ).first?.uint32
    }
}
