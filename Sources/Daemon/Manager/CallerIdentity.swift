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

    /// The caller's uid and groups (GetConnectionCredentials: UnixUserID, UnixGroupIDs, which
    /// dbus-daemon reads with SO_PEERCRED and SO_PEERGROUPS); nil when the bus does not say.
    static func credentials(of sender: String, on bus: DBusConnection) async throws -> (uid: UInt32, groups: [UInt32])? {
        let reply = try await bus.call(
            destination: StandardInterfaces.bus, path: StandardInterfaces.busPath, interface: StandardInterfaces.bus, member: "GetConnectionCredentials",
            [.string(sender)])
        guard let fields = reply.first?.stringKeyed?.mapValues({ $0.variant ?? $0 }), let uid = fields["UnixUserID"]?.uint32 else { return nil }
        return (uid, fields["UnixGroupIDs"]?.arrayElements?.compactMap(\.uint32) ?? [])
    }
}
