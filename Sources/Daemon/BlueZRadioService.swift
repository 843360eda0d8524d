// SPDX-License-Identifier: GPL-3.0-or-later

import BlueZ
import ContactLog
import DBus
import ENCore
import KeySchedule
import Logging
import Beacon
import ServiceLifecycle
import GaendConfiguration

/// The beacon beside bluetoothd (`--radio bluez:hciN`): follows bluetoothd on the system bus
/// (NameOwnerChanged), the adapter's presence and Powered, and runs the advertiser and scanner
/// while all three allow. Powered false → status bluetooth-off, resumed when powered again;
/// bluetoothd leaving and returning → everything registered again; the advertisement released →
/// registered again; the system bus lost → reconnected with backoff.
package struct BlueZRadioService: Service, BeaconService {
    let adapterIndex: UInt16
    let beacon: BeaconContext
    /// The bus to use instead of the system bus (tests).
    let busAddress: String?

    package init(adapterIndex: UInt16, beacon: BeaconContext, busAddress: String? = nil) {
        self.adapterIndex = adapterIndex
        self.beacon = beacon
        self.busAddress = busAddress
    }

    enum Stop { case shutdown, busLost }

    package func run() async throws {
        var backoff = Backoff()
        var unreachable = FailureStreak()
        while true {
            do {
                let bus = if let busAddress { try await DBusConnection.bus(address: busAddress) } else { try await DBusConnection.system() }
                backoff.reset()
                unreachable.recovered("system bus reachable again", logger: logger)
                let stop = try await session(on: bus)
                bus.close()
                if stop == .shutdown { return }
                status.set(.bluetoothOff, reason: "the system bus went away")
                logger.warning("system bus lost; reconnecting", metadata: ["retryIn": "\(backoff.delay)"])
            } catch {
                status.set(.bluetoothOff, reason: "the system bus is unreachable")
                unreachable.failed(
                    "system bus unreachable; retrying until it answers", metadata: ["error": "\(error)", "retryIn": "\(backoff.delay)"], logger: logger)
            }
            if await ShutdownWaits.sleepOrShutdown(backoff.next(), clock: monotonic) { return }
        }
    }

    /// One connection's life: bluetoothd's signals and owner, the advertisement's Release, the
    /// owner's switch and shutdown, handled in arrival order by `AdapterMachine`, whose actions
    /// `Driver` carries out.
    private func session(on bus: DBusConnection) async throws -> Stop {
        let adapterPath = BlueZNames.adapterPath(index: adapterIndex)
        let advertisement = AdvertisementObject()
        try await advertisement.export(on: bus)
        let signals = try await bus.subscribe(DBusMatchRule(sender: BlueZNames.service))
        let owners = try await bus.nameOwner(of: BlueZNames.service)
        let progress = SignalProgress()
        let current = ServiceState()
        let radio = BlueZRadio(
            bus: bus, adapterPath: adapterPath, advertisement: advertisement, txPower: beacon.settings.txPower ?? 0, logger: logger,
            drain: { await progress.wait(until: bus.lastDelivered(to: signals)) })
        let (events, sink) = AsyncStream<AdapterMachine.Event>.makeStream()
        return await withTaskGroup(of: Void.self) { group -> Stop in
            group.addTask {
                for await owner in owners { sink.yield(.ownerChanged(owner)) }
                sink.yield(.busLost)
            }
            // bluetoothd's signals in order: sightings straight to the scanner (never waiting on the
            // loop below, which may be waiting on the scanner), adapter state to the loop.
            group.addTask {
                var interpreter = BlueZSignalInterpreter(adapterPath: adapterPath)
                for await signal in signals.messages {
                    for event in interpreter.handle(signal) {
                        switch event {
                        case .sighting(let sighting): await current.scanner?.handle(.sighting(sighting))
                        case .adapterPresent(let present): sink.yield(.adapterPresent(present))
                        case .powered(let powered): sink.yield(.powered(powered))
                        }
                    }
                    progress.processed(signal.sequence)
                }
                progress.end()
                sink.yield(.busLost)
            }
            group.addTask {
                for await _ in advertisement.released { sink.yield(.released) }
            }
            group.addTask {
                for await enabled in gate.updates() { sink.yield(.enabled(enabled)) }
            }
            group.addTask {
                try? await gracefulShutdown()
                sink.yield(.shutdown)
            }
            var machine = AdapterMachine(adapterName: "hci\(adapterIndex)")
            var driver = Driver(service: self, bus: bus, radio: radio, current: current)
            var stop = Stop.busLost
            loop: for await event in events {
                var actions = machine.handle(event)
                if event == .released, actions.contains(.stopBeacon) {
                    logger.warning("bluetoothd released the advertisement; registering again")
                }
                while !actions.isEmpty {
                    let action = actions.removeFirst()
                    if action == .end {
                        if event == .shutdown { stop = .shutdown }
                        break loop
                    }
                    if let answer = await driver.perform(action) { actions += machine.handle(answer) }
                }
            }
            sink.finish()
            group.cancelAll()
            return stop
        }
    }

    /// Carries out `AdapterMachine`'s actions on the bus and owns the running beacon.
    struct Driver {
        let service: BlueZRadioService
        let bus: DBusConnection
        let radio: BlueZRadio
        let current: ServiceState
        /// The beacon while it runs; cancelled and awaited by `.stopBeacon`, never left behind.
        var operation: Task<Void, Never>?

        init(service: BlueZRadioService, bus: DBusConnection, radio: BlueZRadio, current: ServiceState) {
            self.service = service
            self.bus = bus
            self.radio = radio
            self.current = current
        }

        /// Does `action`; answers with the event it produced, if any (`.readAdapter`).
        mutating func perform(_ action: AdapterMachine.Action) async -> AdapterMachine.Event? {
            switch action {
            case .stopBeacon:
                await stopOperation()
                await current.session?.interrupt()
            case .silence:
                try? await current.session?.advertiser.stop()
                try? await radio.stopScanning()
            case .forgetRegistrations:
                await radio.markReleased()
            case .readAdapter:
                return await readAdapter()
            case .startBeacon:
                let (service, radio, current) = (service, radio, current)
                operation = Task { await service.operate(radio: radio, current: current) }
            case .reportStarting:
                service.status.set(.starting)
            case .reportOff(let reason):
                service.status.set(.bluetoothOff, reason: reason)
            case .finish:
                // The open window written with discovery stopped, the advertisement unregistered,
                // the log synced.
                await stopOperation()
                await current.session?.finish()
                service.logger.notice("radio stopped for shutdown")
            case .end:
                break
            }
            return nil
        }

        private mutating func stopOperation() async {
            operation?.cancel()
            await operation?.value
            operation = nil
        }

        private func readAdapter() async -> AdapterMachine.Event {
            do {
                let objects = try await bus.call(
                    destination: BlueZNames.service, path: "/", interface: StandardInterfaces.objectManager, member: "GetManagedObjects")
                guard let first = objects.first else { return .adapterUnreadable }
                let state = BlueZSignalInterpreter.adapterState(in: first, adapterPath: BlueZNames.adapterPath(index: service.adapterIndex))
                return .adapterRead(present: state.contains(.adapterPresent(true)), powered: state.contains(.powered(true)))
            } catch {
                service.logger.warning("reading bluetoothd's objects", metadata: ["error": "\(error)"])
                return .adapterUnreadable
            }
        }
    }

    /// The beacon on bluetoothd until cancelled; a failure (bluetoothd refusing, timing out) is
    /// logged and retried with backoff.
    func operate(radio: BlueZRadio, current: ServiceState) async {
        var backoff = FaultBackoff(clock: monotonic)
        while !Task.isCancelled {
            do {
                let session = try beacon.session(on: radio)
                current.set(session)
                let (status, logger, adapterIndex) = (status, logger, adapterIndex)
                try await session.run {
                    status.set(.active)
                    logger.notice("advertising through bluetoothd", metadata: ["adapter": "hci\(adapterIndex)"])
                }
            } catch is CancellationError {
                return
            } catch {
                if Task.isCancelled { return }
                let wait = backoff.next()
                logger.error("bluetoothd radio failure; retrying", metadata: ["error": "\(error)", "retryIn": "\(wait)"])
                await current.session?.interrupt()
                try? await monotonic.sleep(for: wait)
            }
        }
    }
}
