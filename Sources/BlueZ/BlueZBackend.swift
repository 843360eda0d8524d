// SPDX-License-Identifier: GPL-3.0-or-later

package import Beacon
import DBus
package import Logging

/// The beacon beside bluetoothd (`--radio bluez:hciN`): the link is the system bus, on which
/// bluetoothd's owner, the adapter's presence and Powered, and our advertisement's Release are
/// followed; `BeaconMachine` runs the advertiser and scanner while all allow. Powered false →
/// status bluetooth-off, resumed when powered again; bluetoothd leaving and returning →
/// everything registered again; the bus lost → reconnected with backoff.
package struct BlueZBackend: BeaconBackend {
    let adapterIndex: UInt16
    /// The bus to use instead of the system bus (tests).
    let busAddress: String?
    /// bluetoothd does not say the controller's advertising power: the configured one (or 0).
    let txPower: Int8
    let logger: Logger

    package init(adapterIndex: UInt16, busAddress: String? = nil, txPower: Int8 = 0, logger: Logger) {
        self.adapterIndex = adapterIndex
        self.busAddress = busAddress
        self.txPower = txPower
        self.logger = logger
    }

    package var kind: BeaconMachine.Backend { .bluez(adapter: "hci\(adapterIndex)") }
    package var linkName: String { "system bus" }

    package func connect(reports: ReportRoute) async throws -> BlueZLink {
        let bus = if let busAddress { try await DBusConnection.bus(address: busAddress) } else { try await DBusConnection.system() }
        do {
            return try await BlueZLink(bus: bus, adapterIndex: adapterIndex, txPower: txPower, reports: reports, logger: logger)
        } catch {
            bus.close()
            throw error
        }
    }
}

/// One connection to the system bus: our advertisement exported on it, bluetoothd's signals read
/// in order (sightings to the route, adapter state to the driver), its owner followed.
package struct BlueZLink: BeaconLink {
    let bus: DBusConnection
    let adapterPath: String
    let advertisement: AdvertisementObject
    let signals: DBusConnection.SignalSubscription
    let owners: AsyncStream<String?>
    let radio: BlueZRadio
    let reports: ReportRoute
    let progress: ReportProgress
    let logger: Logger

    init(bus: DBusConnection, adapterIndex: UInt16, txPower: Int8, reports: ReportRoute, logger: Logger) async throws {
        adapterPath = BlueZNames.adapterPath(index: adapterIndex)
        advertisement = AdvertisementObject()
        try await advertisement.export(on: bus)
        let signals = try await bus.subscribe(DBusMatchRule(sender: BlueZNames.service))
        owners = try await bus.nameOwner(of: BlueZNames.service)
        let progress = ReportProgress()
        radio = BlueZRadio(
            bus: bus, adapterPath: adapterPath, advertisement: advertisement, txPower: txPower, logger: logger,
            drain: { await progress.wait(until: bus.lastDelivered(to: signals)) })
        self.bus = bus
        self.signals = signals
        self.progress = progress
        self.reports = reports
        self.logger = logger
    }

    package func run(events: BeaconEvents) async {
        let (owners, signals, adapterPath, reports, progress, advertisement) = (owners, signals, adapterPath, reports, progress, advertisement)
        let bus = bus
        await withTaskGroup(of: Void.self) { group in
            // bluetoothd's calls to our advertisement (GetAll, Release), answered here.
            group.addTask { await bus.serve() }
            group.addTask {
                for await owner in owners { events.tell(.ownerChanged(owner)) }
            }
            group.addTask {
                for await _ in advertisement.released { events.tell(.released) }
            }
            // bluetoothd's signals in order: sightings straight to the scanner (never waiting on
            // the driver's loop, which may be waiting on the scanner), adapter state to the loop.
            var interpreter = BlueZSignalInterpreter(adapterPath: adapterPath)
            for await signal in signals.messages {
                for event in interpreter.handle(signal) {
                    switch event {
                    case .sighting(let sighting): await reports.deliver(.sighting(sighting))
                    case .adapterPresent(let present): events.tell(.adapterPresent(present))
                    case .powered(let powered): events.tell(.powered(powered))
                    }
                }
                progress.processed(signal.sequence)
            }
            progress.end()
            // The bus is gone: the owner's stream and the advertisement's end with it.
            group.cancelAll()
        }
    }

    package func radio() async throws -> any BeaconRadio { radio }

    package func fault(for error: any Error) -> String? { "\(error)" }

    package func perform(_ action: BeaconMachine.Action) async -> [BeaconMachine.Event] {
        switch action {
        case .readAdapter: return [await readAdapter()]
        case .forgetRegistrations:
            await radio.markReleased()
            return []
        default: return []
        }
    }

    package func close() { bus.close() }

    private func readAdapter() async -> BeaconMachine.Event {
        do {
            let objects = try await bus.call(
                destination: BlueZNames.service, path: "/", interface: StandardInterfaces.objectManager, member: "GetManagedObjects")
            guard let first = objects.first else { return .adapterUnreadable }
            let state = BlueZSignalInterpreter.adapterState(in: first, adapterPath: adapterPath)
            return .adapterRead(present: state.contains(.adapterPresent(true)), powered: state.contains(.powered(true)))
        } catch {
            logger.warning("reading bluetoothd's objects", metadata: ["error": "\(error)"])
            return .adapterUnreadable
        }
    }
}
