// SPDX-License-Identifier: GPL-3.0-or-later

import BlueZ
public import ContactLog
import DBus
public import ENCore
public import KeySchedule
public import Logging
public import Radio
public import ServiceLifecycle
public import GaendAPI

/// The beacon beside bluetoothd (`--radio bluez:hciN`): follows bluetoothd on the system bus
/// (NameOwnerChanged), the adapter's presence and Powered, and runs the advertiser and scanner
/// while all three allow. Powered false → status bluetooth-off, resumed when powered again;
/// bluetoothd leaving and returning → everything registered again; the advertisement released →
/// registered again; the system bus lost → reconnected with backoff.
public struct BlueZRadioService: Service {
    let adapterIndex: UInt16
    let settings: RadioSettings
    let keys: KeySchedule
    let log: ContactLogWriter
    let clock: any WallClock
    /// Where scan windows, rotations and backoff pass (the continuous clock; a test's clock).
    let monotonic: any Clock<Duration>
    let status: RadioStatusBoard
    let gate: EnablementGate
    let logger: Logger
    /// The bus to use instead of the system bus (tests).
    let busAddress: String?

    public init(
        adapterIndex: UInt16, settings: RadioSettings, keys: KeySchedule, log: ContactLogWriter, clock: any WallClock, status: RadioStatusBoard,
        gate: EnablementGate, logger: Logger, busAddress: String? = nil, monotonic: any Clock<Duration> = ContinuousClock()
    ) {
        self.monotonic = monotonic
        self.gate = gate
        self.adapterIndex = adapterIndex
        self.settings = settings
        self.keys = keys
        self.log = log
        self.clock = clock
        self.status = status
        self.logger = logger
        self.busAddress = busAddress
    }

    enum Stop { case shutdown, busLost }

    public func run() async throws {
        var backoff = Duration.seconds(1)
        while true {
            do {
                let bus = if let busAddress { try await DBusConnection.bus(address: busAddress) } else { try await DBusConnection.system() }
                backoff = .seconds(1)
                let stop = try await session(on: bus)
                bus.close()
                if stop == .shutdown { return }
                status.set(.bluetoothOff, reason: "the system bus went away")
                logger.warning("system bus lost; reconnecting", metadata: ["retryIn": "\(backoff)"])
            } catch {
                status.set(.bluetoothOff, reason: "the system bus is unreachable")
                logger.warning("system bus unreachable; retrying", metadata: ["error": "\(error)", "retryIn": "\(backoff)"])
            }
            if await ShutdownWaits.sleepOrShutdown(backoff, clock: monotonic) { return }
            backoff = min(backoff * 2, .seconds(30))
        }
    }

    enum Event: Sendable {
        case owner(String?)
        case adapter(BlueZSignalInterpreter.Event)
        case released
        case enabled(Bool)
        case shutdown
        case busLost
    }

    /// One connection's life: bluetoothd's signals and owner, the advertisement's Release, and
    /// shutdown, all handled by one loop in arrival order.
    private func session(on bus: DBusConnection) async throws -> Stop {
        let adapterPath = BlueZNames.adapterPath(index: adapterIndex)
        let advertisement = AdvertisementObject()
        try await advertisement.export(on: bus)
        let signals = try await bus.subscribe(DBusMatchRule(sender: BlueZNames.service))
        let owners = try await bus.nameOwner(of: BlueZNames.service)
        let progress = SignalProgress()
        let current = ServiceState()
        let radio = BlueZRadio(
            bus: bus, adapterPath: adapterPath, advertisement: advertisement, txPower: settings.txPower ?? 0, logger: logger,
            drain: { await progress.wait(until: bus.lastDelivered(to: signals)) })
        let (events, sink) = AsyncStream<Event>.makeStream()
        return await withTaskGroup(of: Void.self) { group -> Stop in
            group.addTask {
                for await owner in owners { sink.yield(.owner(owner)) }
                sink.yield(.busLost)
            }
            // bluetoothd's signals in order: sightings straight to the scanner (never waiting on the
            // loop below, which may be waiting on the scanner), adapter state to the loop.
            group.addTask {
                var interpreter = BlueZSignalInterpreter(adapterPath: adapterPath)
                for await signal in signals.messages {
                    for event in interpreter.handle(signal) {
                        if case .sighting(let sighting) = event {
                            await current.scanner?.handle(.sighting(sighting))
                        } else {
                            sink.yield(.adapter(event))
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
            var machine = Machine(service: self, bus: bus, radio: radio, current: current)
            var stop = Stop.busLost
            loop: for await event in events {
                switch event {
                case .owner(let owner):
                    await machine.ownerChanged(owner)
                case .adapter(let change):
                    machine.apply([change])
                case .released:
                    await machine.released()
                case .enabled(let enabled):
                    machine.enabled = enabled
                case .shutdown:
                    await machine.finish()
                    stop = .shutdown
                    break loop
                case .busLost:
                    await machine.stopOperation()
                    break loop
                }
                await machine.reconcile()
            }
            sink.finish()
            group.cancelAll()
            return stop
        }
    }

    /// The session's state: who owns org.bluez, whether the adapter is there and powered, and the
    /// running beacon operation.
    struct Machine {
        let service: BlueZRadioService
        let bus: DBusConnection
        let radio: BlueZRadio
        let current: ServiceState
        var owner: String?
        var adapterPresent = false
        var powered = false
        var enabled = false
        /// The beacon while it runs; cancelled and awaited by `stopOperation`, never left behind.
        var operation: Task<Void, Never>?

        init(service: BlueZRadioService, bus: DBusConnection, radio: BlueZRadio, current: ServiceState) {
            self.service = service
            self.bus = bus
            self.radio = radio
            self.current = current
        }

        mutating func ownerChanged(_ newOwner: String?) async {
            guard newOwner != owner || operation == nil else { return }
            if operation != nil { await stopOperation() }
            owner = newOwner
            // A new bluetoothd has none of the old one's registrations or discovery sessions.
            await radio.markReleased()
            adapterPresent = false
            powered = false
            guard newOwner != nil else { return }
            do {
                let objects = try await bus.call(
                    destination: BlueZNames.service, path: "/", interface: BlueZNames.objectManager, member: "GetManagedObjects")
                if let first = objects.first {
                    apply(BlueZSignalInterpreter.adapterState(in: first, adapterPath: BlueZNames.adapterPath(index: service.adapterIndex)))
                }
            } catch {
                service.logger.warning("reading bluetoothd's objects", metadata: ["error": "\(error)"])
            }
        }

        mutating func apply(_ events: [BlueZSignalInterpreter.Event]) {
            for event in events {
                switch event {
                case .adapterPresent(let present):
                    adapterPresent = present
                    if !present { powered = false }
                case .powered(let value): powered = value
                case .sighting: break
                }
            }
        }

        mutating func released() async {
            await radio.markReleased()
            guard operation != nil else { return }
            service.logger.warning("bluetoothd released the advertisement; registering again")
            await stopOperation()
        }

        /// Starts or stops the beacon to match the state, and says so in the status.
        mutating func reconcile() async {
            let adapter = "hci\(service.adapterIndex)"
            let obstacle: String? =
                if owner == nil { "bluetoothd is not on the system bus" } else if !adapterPresent { "adapter \(adapter) not found" } else if !powered {
                    "adapter \(adapter) is powered off"
                } else { nil }
            if !enabled {
                // Disabled: advertising and scanning stop; the status stays what the adapter is.
                if operation != nil {
                    await stopOperation()
                    try? await current.session?.advertiser.stop()
                    try? await radio.stopScanning()
                }
                if let obstacle { service.status.set(.bluetoothOff, reason: obstacle) }
            } else if let obstacle {
                if operation != nil { await stopOperation() }
                service.status.set(.bluetoothOff, reason: obstacle)
            } else if operation == nil {
                service.status.set(.starting)
                let service = service
                let radio = radio
                let current = current
                operation = Task { await service.operate(radio: radio, current: current) }
            }
        }

        /// Cancels the beacon and writes its open scan window.
        mutating func stopOperation() async {
            guard let running = operation else { return }
            running.cancel()
            await running.value
            operation = nil
            await current.session?.interrupt()
        }

        /// Shutdown: the open window written with discovery stopped, the advertisement unregistered,
        /// the log synced.
        mutating func finish() async {
            operation?.cancel()
            await operation?.value
            operation = nil
            await current.session?.finish()
            service.logger.notice("radio stopped for shutdown")
        }
    }

    /// The beacon on bluetoothd until cancelled; a failure (bluetoothd refusing, timing out) is
    /// logged and retried with backoff.
    func operate(radio: BlueZRadio, current: ServiceState) async {
        var backoff = Duration.seconds(1)
        while !Task.isCancelled {
            do {
                let session = try BeaconSession(radio: radio, keys: keys, log: log, clock: clock, monotonic: monotonic, settings: settings, logger: logger)
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
                logger.error("bluetoothd radio failure; retrying", metadata: ["error": "\(error)", "retryIn": "\(backoff)"])
                await current.session?.interrupt()
                try? await monotonic.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(30))
            }
        }
    }
}
