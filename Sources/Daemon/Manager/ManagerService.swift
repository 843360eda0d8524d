// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
import DBus
package import GaendAPI
import ENCore
package import Logging
package import Beacon
import OwnerSignals
import ServiceLifecycle
package import GaendConfiguration

/// Manager1 on the bus: connects, exports the object, takes the name org.gaend (a second daemon
/// is refused: the name is taken), tells systemd it is ready, and keeps the properties announced
/// as their owners change them: after every call, on the radio's status, the owner's switch, the
/// log's activity, what is on the air and the detection worker's state, and when time alone
/// changes one (midnight, the detection budget). Nothing is polled: between those, gaend sleeps.
package struct ManagerService: Service {
    /// Where it is served (the configuration's `bus`).
    package typealias Bus = ManagerBus

    let manager: Manager
    let bus: Bus
    let radioStatus: RadioStatusBoard
    let gate: EnablementGate
    let signals: DetectionSignals
    let notifier: SystemdNotifier
    let logger: Logger
    /// The group whose members, beside root and gaend's user, read the exposure answer.
    let ownerGroup: String
    /// Where the wait for a change by time alone passes (the continuous clock; a test's clock).
    let ticks: any Clock<Duration>

    package init(
        manager: Manager, bus: Bus, radioStatus: RadioStatusBoard, gate: EnablementGate, signals: DetectionSignals, notifier: SystemdNotifier,
        logger: Logger, ownerGroup: String = "gaend", ticks: any Clock<Duration> = ContinuousClock()
    ) {
        self.ownerGroup = ownerGroup
        self.ticks = ticks
        self.manager = manager
        self.bus = bus
        self.radioStatus = radioStatus
        self.gate = gate
        self.signals = signals
        self.notifier = notifier
        self.logger = logger
    }

    package func run() async throws {
        let connection: DBusConnection
        switch bus {
        case .none:
            notifier.notify("READY=1\nSTATUS=running without D-Bus")
            try? await gracefulShutdown()
            return
        case .system: connection = try await DBusConnection.system()
        case .session: connection = try await DBusConnection.session()
        case .address(let address): connection = try await DBusConnection.bus(address: address)
        }
        defer { connection.close() }
        let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let group = PrivateReaders.gid(of: ownerGroup)
        if group == nil {
            logger.warning(
                "owner-group does not exist: only root and gaend's user read the exposure answer over D-Bus", metadata: ["group": "\(ownerGroup)"])
        }
        // What clients can read from the export on, before anything that follows may change it:
        // the base every announcement is diffed against.
        let initial = await manager.snapshot()
        let publisher = PropertyPublisher(manager: manager, connection: connection, notifier: notifier, initial: initial)
        let object = ManagerObject(
            manager: manager, bus: connection, readers: PrivateReaders(bus: connection, group: group), properties: { publisher.snapshot },
            refresh: { await publisher.refresh() })
        try await connection.export(Manager1.objectPath, interfaces: [object.table])
        do {
            switch try await connection.requestName(Manager1.busName) {
            case .primaryOwner, .alreadyOwner: break
            case .exists, .inQueue:
                throw ManagerServiceError("\(Manager1.busName) is already owned on the bus: another gaend is running")
            }
        } catch let error as DBusError where error.name == .accessDenied {
            throw ManagerServiceError(
                "not allowed to own \(Manager1.busName): install dbus-policy/org.gaend.conf and run as the gaend user (\(error.message))")
        }
        signals.attach(connection)
        defer { signals.attach(nil) }
        logger.notice("on the bus", metadata: ["name": "\(Manager1.busName)", "unique": "\(connection.uniqueName)"])
        notifier.notify("READY=1\nSTATUS=\(initial.owner.systemdLine)")

        await withTaskGroup(of: Void.self) { group in
            let ticks = ticks
            // Manager1's calls, each answered in a child of this group.
            group.addTask { await connection.serve() }
            group.addTask {
                await manager.followChanges(radioStatus: radioStatus, gate: gate, ticks: ticks) { trigger.yield() }
            }
            group.addTask {
                for await _ in triggers { await publisher.refresh() }
            }
            group.addTask {
                await connection.disconnected()
            }
            group.addTask {
                try? await gracefulShutdown()
            }
            // Shutdown, or the bus gone: either ends the service.
            await group.next()
            group.cancelAll()
            trigger.finish()
        }
        if !connection.isConnected {
            throw ManagerServiceError("the bus connection was lost")
        }
        notifier.notify("STOPPING=1")
    }
}

package struct ManagerServiceError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
