// SPDX-License-Identifier: GPL-3.0-or-later

package import DBus
import Glibc

/// Who may read the answer to "was I exposed?" (`Manager1.Property.isPrivate`): root, gaend's own
/// user and members of the owner's group (`owner-group`, default `gaend`, the group the D-Bus
/// policy lets drive gaend). The uid and groups are the bus daemon's (GetConnectionCredentials,
/// from the caller's socket), never what the caller says. Exposure is health data: other local
/// users see the radio's status, not it (issue 40, item 14).
package struct PrivateReaders: Sendable {
    let bus: DBusConnection
    /// The owner's group, when it exists on this system.
    let group: UInt32?
    let ownUser = UInt32(geteuid())

    /// The gid of `groupName`, nil when there is no such group (then only root and gaend's user).
    package static func gid(of groupName: String) -> UInt32? {
        guard let entry = getgrnam(groupName) else { return nil }
        return UInt32(entry.pointee.gr_gid)
    }

    package init(bus: DBusConnection, group: UInt32?) {
        self.bus = bus
        self.group = group
    }

    func allows(_ sender: String) async -> Bool {
        guard let caller = try? await CallerIdentity.credentials(of: sender, on: bus) else { return false }
        if caller.uid == 0 || caller.uid == ownUser { return true }
        return group.map(caller.groups.contains) ?? false
    }
}
