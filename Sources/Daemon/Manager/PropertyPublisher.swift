// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import GaendAPI
import OwnerSignals
import Synchronization

/// The Manager1 properties last published, and their publisher (issue 48). Get and GetAll read
/// the held snapshot's fields; `refresh` assembles a new one from the owners' published values,
/// announces what differs in one PropertiesChanged and moves systemd's status line. A refresh runs
/// after every method call before its reply, and on each owner's notice, so that what a reply's
/// caller reads next is already what the call made; of refreshes that overlap, only the
/// newest-started publishes.
actor PropertyPublisher {
    private let manager: Manager
    private let connection: DBusConnection
    private let notifier: SystemdNotifier
    private let held: Mutex<ManagerSnapshot>
    /// Refreshes started, and the newest whose snapshot was published: the actor is reentrant, so
    /// a refresh that started earlier may finish its reading later, and must not publish over a
    /// newer one (the old publisher was one loop and could not).
    private var started = 0
    private var newestPublished = 0

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
        started += 1
        let mine = started
        let next = await manager.snapshot()
        guard mine > newestPublished else { return }
        newestPublished = mine
        let before = snapshot
        let changed = next.changes(since: before)
        guard !changed.isEmpty else { return }
        held.withLock { $0 = next }
        let values = Dictionary(uniqueKeysWithValues: changed.map { ($0.rawValue, ManagerObject.value(next.value(of: $0), of: $0)) })
        try? connection.emitPropertiesChanged(path: Manager1.objectPath, interface: Manager1.interface, changed: values)
        if next.owner.systemdLine != before.owner.systemdLine { notifier.notify("STATUS=\(next.owner.systemdLine)") }
    }
}
