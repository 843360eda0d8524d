// SPDX-License-Identifier: GPL-3.0-or-later

import ContactLog
import ENCore
package import HCI
import KeySchedule
import Logging
import Beacon
import ServiceLifecycle
import Storage
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

    /// One loop, `BeaconMachine` deciding: the owner's switch, shutdown, the controller's
    /// connection, its faults and the waits between, in arrival order; this carries the actions out
    /// and owns the connection and the running beacon, each a child of this task group.
    package func run() async throws {
        let (inputs, sink) = AsyncStream<BeaconInput>.makeStream()
        let operation = BeaconOperation()
        let since = Stopwatch(monotonic)
        var machine = BeaconMachine(backend: .hci)
        var unreachable = FailureStreak()
        var connection: (generation: Int, transport: FileDescriptorTransport, controller: HCIController)?
        var connections = 0
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await enabled in gate.updates() { sink.yield(.event(.enabled(enabled))) }
            }
            followClock(group: &group, sink: sink)
            group.addTask {
                try? await gracefulShutdown()
                sink.yield(.event(.shutdown))
            }
            loop: for await input in inputs {
                guard let event = current(input, connection: connection?.generation, operation: operation) else { continue }
                if case .connection(_, .lost) = input { logger.warning("controller lost; reconnecting", metadata: ["radio": "\(spec)"]) }
                var actions = machine.handle(event)
                while !actions.isEmpty {
                    let action = actions.removeFirst()
                    let controller = connection?.controller
                    let handled = await performShared(action, operation: operation, group: &group, sink: sink) {
                        guard let controller else { return nil }
                        return await self.operate(controller, operation: operation, since: since, sink: sink)
                    }
                    if handled { continue }
                    switch action {
                    case .connect:
                        let transport: FileDescriptorTransport
                        do {
                            transport = try connect()
                        } catch {
                            let answer = machine.handle(.unreachable)
                            let retryIn = answer.compactMap { if case .wait(let wait, _) = $0 { wait } else { nil } }.first ?? .zero
                            unreachable.failed(
                                "controller unreachable; retrying until it answers",
                                metadata: ["radio": "\(spec)", "error": "\(error)", "retryIn": "\(retryIn)"], logger: logger)
                            actions += answer
                            continue
                        }
                        unreachable.recovered("controller reachable again", logger: logger)
                        connections += 1
                        let (generation, controller) = (connections, HCIController(transport: transport, clock: commandClock, logger: logger))
                        connection = (generation, transport, controller)
                        group.addTask {
                            await controller.run()
                            sink.yield(.connection(generation, .lost))
                        }
                        // Reports go to whichever scanner is current: one consumer for the connection,
                        // since an AsyncStream ends when an iteration of it is cancelled.
                        group.addTask {
                            for await report in controller.reports { await operation.scanner?.handle(HCIRadio.report(report)) }
                        }
                        group.addTask {
                            for await _ in controller.hardwareErrorEvents {
                                sink.yield(.connection(generation, .fault(Self.hardwareError, at: since.elapsed)))
                            }
                        }
                        actions += machine.handle(.connected)
                    case .disconnect:
                        connection?.transport.close()
                        connection = nil
                    case .end: break loop
                    default: break
                    }
                }
            }
            connection?.transport.close()
            sink.finish()
            group.cancelAll()
        }
    }

    /// The reason a hardware error gives, whether its event or a command it failed tells it first.
    static let hardwareError = "the controller reported a hardware error"

    /// Initializes the controller and runs the beacon on it until it fails: the fault to tell the
    /// machine, or nil when the transport went (its end tells that) or the run was stopped.
    private func operate(
        _ controller: HCIController, operation: BeaconOperation, since: Stopwatch, sink: AsyncStream<BeaconInput>.Continuation
    ) async -> BeaconMachine.Event? {
        do {
            let info = try await controller.initialize()
            logger.notice(
                "controller ready",
                metadata: [
                    "radio": "\(spec)", "hci.version": "\(info.hciVersion)", "hci.manufacturer": "\(info.manufacturer)",
                    "txPower": "\(info.advertisingTxPower)", "extendedAdvertising": "\(info.supportsExtendedAdvertising)",
                ])
            let radio = HCIRadio(controller: controller, info: info, clock: monotonic)
            let session = try beacon.session(on: radio)
            // The previous session's window (if any) was written when it stopped.
            operation.set(session)
            let (keys, logger, generation) = (beacon.keys, logger, operation.generation)
            try await session.run {
                sink.yield(.operation(generation, .advertising))
                let key = try? await keys.currentKey()
                logger.notice("advertising", metadata: ["key.rollingStart": "\(key.map { "\($0.rollingStartIntervalNumber)" } ?? "?")"])
            }
            return nil
        } catch HCIControllerError.closed, HCIControllerError.transport(_), is CancellationError {
            return nil
        } catch HCIControllerError.hardwareError(_) {
            return .fault(Self.hardwareError, at: since.elapsed)
        } catch {
            return .fault("\(error)", at: since.elapsed)
        }
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
