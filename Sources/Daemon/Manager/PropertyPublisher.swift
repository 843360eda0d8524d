// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import GaendAPI
import OwnerSignals
import Synchronization

/// The Manager1 properties last published, and their publisher (issue 48). Get and GetAll read
/// the held snapshot's fields; `refresh` assembles a new one from the owners' published values,
/// announces what differs in one PropertiesChanged and moves systemd's status line. Refreshes
/// run one at a time (an actor), after every method call before its reply, and on each owner's
/// notice, so that what a reply's caller reads next is already what the call made.
actor PropertyPublisher {
    private let manager: Manager
    private let connection: DBusConnection
    private let notifier: SystemdNotifier
    private let held: Mutex<ManagerSnapshot>

    init(manager: Manager, connection: DBusConnection, notifier: SystemdNotifier, initial: ManagerSnapshot) {
        self.manager = manager
        self.connection = connection
        self.notifier = notifier
        held = Mutex(initial)
    }

    /// The snapshot last published: what Get and GetAll answer, without waiting for anything.
    nonisolated var snapshot: ManagerSnapshot { held.withLock { $0 } }

    /// Reads the owners again and publishes what changed.
    func refresh() async {
        let next = await manager.snapshot()
        let before = snapshot
        let changed = next.changes(since: before)
        guard !changed.isEmpty else { return }
        held.withLock { $0 = next }
        let values = Dictionary(uniqueKeysWithValues: changed.map { ($0.rawValue, ManagerObject.value(next.value(of: $0), of: $0)) })
        try? connection.emitPropertiesChanged(path: Manager1.objectPath, interface: Manager1.interface, changed: values)
        if next.owner.systemdLine != before.owner.systemdLine { notifier.notify("STATUS=\(next.owner.systemdLine)") }
    }
}
