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
                logger.warning("system bus lost; reconnecting", metadata: ["retryIn": "\(backoff.delay)"])
            } catch {
                status.set(.bluetoothOff, reason: BeaconMachine.busUnreachable)
                unreachable.failed(
                    "system bus unreachable; retrying until it answers", metadata: ["error": "\(error)", "retryIn": "\(backoff.delay)"], logger: logger)
            }
            if await ShutdownWaits.sleepOrShutdown(backoff.next(), clock: monotonic) { return }
        }
    }

    /// One connection's life: bluetoothd's signals and owner, the advertisement's Release, the
    /// owner's switch, shutdown and the beacon's own faults, handled in arrival order by
    /// `BeaconMachine`, whose actions this carries out, owning the running beacon as a child of
    /// this task group.
    private func session(on bus: DBusConnection) async throws -> Stop {
        let adapterPath = BlueZNames.adapterPath(index: adapterIndex)
        let advertisement = AdvertisementObject()
        try await advertisement.export(on: bus)
        let signals = try await bus.subscribe(DBusMatchRule(sender: BlueZNames.service))
        let owners = try await bus.nameOwner(of: BlueZNames.service)
        let progress = SignalProgress()
        let operation = BeaconOperation()
        let since = Stopwatch(monotonic)
        let radio = BlueZRadio(
            bus: bus, adapterPath: adapterPath, advertisement: advertisement, txPower: beacon.settings.txPower ?? 0, logger: logger,
            drain: { await progress.wait(until: bus.lastDelivered(to: signals)) })
        let (inputs, sink) = AsyncStream<BeaconInput>.makeStream()
        return await withTaskGroup(of: Void.self) { group -> Stop in
            group.addTask {
                for await owner in owners { sink.yield(.event(.ownerChanged(owner))) }
                sink.yield(.event(.busLost))
            }
            // bluetoothd's signals in order: sightings straight to the scanner (never waiting on the
            // loop below, which may be waiting on the scanner), adapter state to the loop.
            group.addTask {
                var interpreter = BlueZSignalInterpreter(adapterPath: adapterPath)
                for await signal in signals.messages {
                    for event in interpreter.handle(signal) {
                        switch event {
                        case .sighting(let sighting): await operation.scanner?.handle(.sighting(sighting))
                        case .adapterPresent(let present): sink.yield(.event(.adapterPresent(present)))
                        case .powered(let powered): sink.yield(.event(.powered(powered)))
                        }
                    }
                    progress.processed(signal.sequence)
                }
                progress.end()
                sink.yield(.event(.busLost))
            }
            group.addTask {
                for await _ in advertisement.released { sink.yield(.event(.released)) }
            }
            group.addTask {
                for await enabled in gate.updates() { sink.yield(.event(.enabled(enabled))) }
            }
            followClock(group: &group, sink: sink)
            group.addTask {
                try? await gracefulShutdown()
                sink.yield(.event(.shutdown))
            }
            var machine = BeaconMachine(backend: .bluez(adapter: "hci\(adapterIndex)"))
            var stop = Stop.busLost
            loop: for await input in inputs {
                guard let event = current(input, connection: nil, operation: operation) else { continue }
                var actions = machine.handle(event)
                if event == .released, actions.contains(.stopBeacon) {
                    logger.warning("bluetoothd released the advertisement; registering again")
                }
                while !actions.isEmpty {
                    let action = actions.removeFirst()
                    let handled = await performShared(action, operation: operation, group: &group, sink: sink) {
                        await self.operate(radio: radio, operation: operation, since: since, sink: sink)
                    }
                    if handled { continue }
                    switch action {
                    case .silence:
                        try? await operation.session?.advertiser.stop()
                        try? await radio.stopScanning()
                    case .forgetRegistrations:
                        await radio.markReleased()
                    case .readAdapter:
                        actions += machine.handle(await readAdapter(bus))
                    case .end:
                        if event == .shutdown { stop = .shutdown }
                        break loop
                    default: break
                    }
                }
            }
            sink.finish()
            group.cancelAll()
            return stop
        }
    }

    private func readAdapter(_ bus: DBusConnection) async -> BeaconMachine.Event {
        do {
            let objects = try await bus.call(
                destination: BlueZNames.service, path: "/", interface: StandardInterfaces.objectManager, member: "GetManagedObjects")
            guard let first = objects.first else { return .adapterUnreadable }
            let state = BlueZSignalInterpreter.adapterState(in: first, adapterPath: BlueZNames.adapterPath(index: adapterIndex))
            return .adapterRead(present: state.contains(.adapterPresent(true)), powered: state.contains(.powered(true)))
        } catch {
            logger.warning("reading bluetoothd's objects", metadata: ["error": "\(error)"])
            return .adapterUnreadable
        }
    }

    /// The beacon on bluetoothd until it fails (bluetoothd refusing, timing out): the fault to
    /// tell the machine, or nil when stopped.
    func operate(radio: BlueZRadio, operation: BeaconOperation, since: Stopwatch, sink: AsyncStream<BeaconInput>.Continuation) async -> BeaconMachine.Event? {
        do {
            let session = try beacon.session(on: radio)
            operation.set(session)
            let (logger, adapterIndex, generation) = (logger, adapterIndex, operation.generation)
            try await session.run {
                sink.yield(.operation(generation, .advertising))
                logger.notice("advertising through bluetoothd", metadata: ["adapter": "hci\(adapterIndex)"])
            }
            return nil
        } catch is CancellationError {
            return nil
        } catch {
            return .fault("\(error)", at: since.elapsed)
        }
    }
}
