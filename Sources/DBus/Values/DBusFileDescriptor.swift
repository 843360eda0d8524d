// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A file descriptor passed over D-Bus (type `h`). It owns its descriptor and closes it when the
/// last reference goes: one sent is duplicated by libdbus, one received is a duplicate for us.
package final class DBusFileDescriptor: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int32

    /// Takes ownership of `rawValue`.
    package init(owning rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// A duplicate of `descriptor`, which stays the caller's.
    package convenience init(duplicating descriptor: Int32) throws(DBusError) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw DBusError(.failed, "cannot duplicate file descriptor \(descriptor): errno \(errno)") }
        self.init(owning: copy)
    }

    deinit { close(rawValue) }

    package static func == (a: DBusFileDescriptor, b: DBusFileDescriptor) -> Bool { a === b }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    package var description: String { "fd \(rawValue)" }
}
