// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
package import HCI
import KeySchedule
import Logging
import Beacon
import ServiceLifecycle
import Storage
import Synchronization
package import GaendConfiguration
import HCIBeacon

/// The beacon as a service: connects to the controller, initializes it, advertises and rotates,
/// scans in windows into the contact log, and reconnects with backoff when the controller goes
/// away. On graceful shutdown it ends the open scan window (flushing it to the log), stops
/// advertising and syncs the log.
package struct RadioService: Service, BeaconService {
    let spec: RadioSpec
    let beacon: BeaconContext
    /// Opens the controller's transport (the spec's; a test's socketpair).
    let connect: @Sendable () throws(HCITransportError) -> FileDescriptorTransport
    /// Where a command's 2 s timeout runs (the continuous clock; a test's clock that never
    /// advances, so a machine slow to schedule the scripted controller is not a controller fault).
    let commandClock: any Clock<Duration>

    package init(spec: RadioSpec, beacon: BeaconContext) {
        self.init(spec: spec, beacon: beacon, connect: { () throws(HCITransportError) in try Self.open(spec) })
    }

    /// The service on transports `connect` opens, one per connection (tests).
    package init(
        spec: RadioSpec, beacon: BeaconContext, commandClock: any Clock<Duration> = ContinuousClock(),
        connect: @escaping @Sendable () throws(HCITransportError) -> FileDescriptorTransport
    ) {
        self.commandClock = commandClock
        self.spec = spec
        self.beacon = beacon
        self.connect = connect
    }

    enum Stop { case shutdown, lost, disabled }

    package func run() async throws {
        var backoff = Backoff()
        var unreachable = FailureStreak()
        while true {
            // Disabled (SetEnabled(false)): the controller is left alone until enabled again.
            if await ShutdownWaits.waitForEnabledOrShutdown(gate) { return }
            let transport: FileDescriptorTransport
            do {
                transport = try connect()
                unreachable.recovered("controller reachable again", logger: logger)
            } catch {
                status.set(.bluetoothOff, reason: "the controller is unreachable")
                let wait = backoff.next()
                unreachable.failed(
                    "controller unreachable; retrying until it answers", metadata: ["radio": "\(spec)", "error": "\(error)", "retryIn": "\(wait)"],
                    logger: logger)
                if await ShutdownWaits.sleepOrShutdown(wait, clock: monotonic) { return }
                continue
            }
            let controller = HCIController(transport: transport, clock: commandClock, logger: logger)
            let state = ServiceState()
            let stop = await withTaskGroup(of: Stop?.self) { outer -> Stop in
                outer.addTask {
                    await controller.run()
                    // The transport ended: stop the operation now rather than at its next command.
                    state.cancelOperation()
                    return nil
                }
                // Reports go to whichever scanner is current; one consumer for the connection, since
                // an AsyncStream ends when an iteration of it is cancelled.
                outer.addTask {
                    for await report in controller.reports { await state.scanner?.handle(HCIRadio.report(report)) }
                    return nil
                }
                outer.addTask {
                    for await count in controller.hardwareErrorEvents { state.requestReinitialization(count) }
                    return nil
                }
                let stop = await withTaskGroup(of: Stop.self) { inner -> Stop in
                    inner.addTask { await self.operate(controller, state: state) }
                    inner.addTask {
                        try? await gracefulShutdown()
                        return .shutdown
                    }
                    inner.addTask {
                        await gate.wait(for: false)
                        return .disabled
                    }
                    let first = await inner.next() ?? .lost
                    inner.cancelAll()
                    return first
                }
                if stop != .lost { await finish(state) }
                transport.close()
                await outer.waitForAll()
                return stop
            }
            if stop == .shutdown { return }
            if stop == .disabled { continue }
            backoff.reset()
            logger.warning("controller lost; reconnecting", metadata: ["radio": "\(spec)"])
            if await ShutdownWaits.sleepOrShutdown(backoff.next(), clock: monotonic) { return }
        }
    }

    /// Runs the beacon on a connected controller until the transport goes away (`.lost`) or
    /// shutdown. A Hardware Error event or a command the controller refuses re-initializes the
    /// controller on the same transport (Core Vol 4 Part E 7.7.16: the host resets it), after
    /// writing the open scan window; repeated faults back off up to 30 s.
    private func operate(_ controller: HCIController, state: ServiceState) async -> Stop {
        var backoff = FaultBackoff(clock: monotonic)
        while true {
            let operation = Task { try await self.operateOnce(controller, state: state) }
            state.setOperation(operation)
            let result = await withTaskCancellationHandler {
                await operation.result
            } onCancel: {
                operation.cancel()
            }
            if Task.isCancelled { return .shutdown }
            let hardwareFault = state.takeReinitializationRequest()
            let reason: String?
            switch result {
            case .failure(HCIControllerError.closed), .failure(HCIControllerError.transport(_)), .success:
                reason = nil
            case .failure(is CancellationError):
                // Cancelled by a Hardware Error event, or because the transport ended.
                reason = hardwareFault.map { _ in "the controller reported a hardware error" }
            case .failure(HCIControllerError.hardwareError(_)):
                // The same fault, met by a command it failed before its event was taken: one reason
                // for both (the controller's log line has the code).
                reason = "the controller reported a hardware error"
            case .failure(let error):
                reason = "\(error)"
            }
            await state.session?.interrupt()
            guard let reason else { return .lost }
            let wait = backoff.next()
            logger.error("controller fault; re-initializing", metadata: ["radio": "\(spec)", "reason": "\(reason)", "retryIn": "\(wait)"])
            if await ShutdownWaits.sleepOrShutdown(wait, clock: monotonic) { return .shutdown }
            // Faults up to now are handled by this re-initialization.
            state.markHandled(hardwareErrors: await controller.hardwareErrors)
        }
    }

    /// Initializes the controller, starts advertising and runs the timeline until a fault.
    private func operateOnce(_ controller: HCIController, state: ServiceState) async throws {
        let info = try await controller.initialize()
        logger.notice(
            "controller ready",
            metadata: [
                "radio": "\(spec)", "hci.version": "\(info.hciVersion)", "hci.manufacturer": "\(info.manufacturer)",
                "txPower": "\(info.advertisingTxPower)", "extendedAdvertising": "\(info.supportsExtendedAdvertising)",
            ])
        let radio = HCIRadio(controller: controller, info: info, clock: monotonic)
        status.set(.active)
        let session = try beacon.session(on: radio)
        // The previous session's window (if any) was written before re-initializing.
        state.set(session)
        let (keys, logger) = (beacon.keys, logger)
        try await session.run {
            let key = try? await keys.currentKey()
            logger.notice("advertising", metadata: ["key.rollingStart": "\(key.map { "\($0.rollingStartIntervalNumber)" } ?? "?")"])
        }
    }

    /// Flushes the open window, stops advertising, syncs the log.
    private func finish(_ state: ServiceState) async {
        await state.session?.finish()
        logger.notice("radio stopped")
    }

    static func open(_ spec: RadioSpec) throws(HCITransportError) -> FileDescriptorTransport {
        switch spec {
        case .unix(let path): return try .unix(path: path)
        case .tcp(let host, let port): return try .tcp(host: host, port: port)
        case .serial(let path, let baud): return try .serial(path: path, baud: baud)
        case .kernel(let index): return try .kernelUserChannel(index: index)
        case .bluez, .none:
            throw HCITransportError(operation: "opening \(spec)", detail: "not an HCI transport")
        }
    }
}

/// What the tasks of one connection share: the current beacon session (its scanner takes the
/// reports; the shutdown path finishes it) and the running operation, which a Hardware Error event
/// or the end of the transport cancels.
final class ServiceState: Sendable {
    private struct Current {
        var session: BeaconSession?
        var operation: Task<Void, any Error>?
        var hardwareErrorRequest: Int?
        var handledHardwareErrors = 0
    }

    private let current = Mutex(Current())

    func set(_ session: BeaconSession) { current.withLock { $0.session = session } }

    var session: BeaconSession? { current.withLock { $0.session } }
    var scanner: Scanner? { session?.scanner }

    func setOperation(_ operation: Task<Void, any Error>) {
        current.withLock { $0.operation = operation }
    }

    func cancelOperation() {
        current.withLock { $0.operation }?.cancel()
    }

    /// Marks the operation for re-initialization and cancels it, unless a re-initialization
    /// already covers this fault (a fault during a command also fails the command).
    func requestReinitialization(_ hardwareErrorCount: Int) {
        current.withLock { state -> Task<Void, any Error>? in
            guard hardwareErrorCount > state.handledHardwareErrors else { return nil }
            state.hardwareErrorRequest = hardwareErrorCount
            return state.operation
        }?.cancel()
    }

    func markHandled(hardwareErrors count: Int) {
        current.withLock { state in
            state.handledHardwareErrors = max(state.handledHardwareErrors, count)
            if let request = state.hardwareErrorRequest, request <= state.handledHardwareErrors { state.hardwareErrorRequest = nil }
        }
    }

    /// The pending request, cleared.
    func takeReinitializationRequest() -> Int? {
        current.withLock { state in
            defer { state.hardwareErrorRequest = nil }
            return state.hardwareErrorRequest
        }
    }
}
