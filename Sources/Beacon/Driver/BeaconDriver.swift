// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions
import DaemonLog
import ENCore
import KeySchedule
import Logging
import ServiceLifecycle

/// The beacon as a service, on any back end: one loop in which `BeaconMachine` decides on the
/// owner's switch, shutdown, the link's news, the beacon's faults and the waits, in arrival order;
/// this carries the actions out and owns what they make: the link, the running beacon and the
/// waits, each a child of its task group, and the radio's status. On graceful shutdown the open
/// scan window is written, advertising stopped and the log synced.
package struct BeaconDriver<Backend: BeaconBackend>: Service {
    let backend: Backend
    let context: BeaconContext
    /// Where the back end's reports go; the counts of those no window took.
    package let reports = ReportRoute()

    package init(backend: Backend, context: BeaconContext) {
        self.backend = backend
        self.context = context
    }

    private var logger: Logger { context.logger }

    /// The loop's own state, beside the machine: the open link and the running beacon.
    private struct Held {
        var link: (generation: Int, link: Backend.Link)?
        var links = 0
        var unreachable = FailureStreak()
    }

    package func run() async throws {
        let (inputs, sink) = AsyncStream<BeaconInput>.makeStream()
        let beacon = BeaconRun()
        let since = Stopwatch(context.monotonic)
        var machine = BeaconMachine(backend: backend.kind)
        var held = Held()
        await withTaskGroup(of: Void.self) { group in
            let gate = context.gate
            group.addTask {
                for await enabled in gate.updates() { sink.yield(.event(.enabled(enabled))) }
            }
            if let shifts = context.clockShifts {
                // Each time the clock is set or its trust changes (not the state at start: the
                // session reads the clock when it starts).
                group.addTask {
                    var updates = shifts.updates().makeAsyncIterator()
                    _ = await updates.next()
                    while await updates.next() != nil { sink.yield(.event(.clockShifted)) }
                }
            }
            group.addTask {
                try? await gracefulShutdown()
                sink.yield(.event(.shutdown))
            }
            loop: for await input in inputs {
                let event: BeaconMachine.Event
                switch input {
                case .event(let value): event = value
                case .link(let generation, let value):
                    guard generation == held.link?.generation else { continue }
                    event = value
                case .run(let generation, let value):
                    guard generation == beacon.generation else { continue }
                    event = value
                }
                if case .link(_, .lost) = input { logger.warning("\(backend.linkName) lost; reconnecting") }
                if event == .released, machine.running { logger.warning("bluetoothd released the advertisement; registering again") }
                var actions = machine.handle(event)
                while !actions.isEmpty {
                    let action = actions.removeFirst()
                    switch action {
                    case .connect:
                        actions += await connect(&held, machine: &machine, group: &group, sink: sink, since: since)
                    case .disconnect:
                        held.link?.link.close()
                        held.link = nil
                    case .readAdapter, .forgetRegistrations:
                        actions += machine.handle(events: await held.link?.link.perform(action) ?? [.adapterUnreadable])
                    case .startBeacon:
                        guard let link = held.link?.link else { continue }
                        let generation = beacon.begin()
                        group.addTask {
                            let outcome = await beacon.run { await self.operate(link, beacon: beacon, generation: generation, sink: sink) }
                            if let outcome { sink.yield(.run(generation, .fault(outcome, at: since.elapsed))) }
                        }
                    case .stopBeacon:
                        await beacon.stop()
                        await beacon.session?.interrupt()
                    case .silence:
                        await beacon.session?.silence()
                    case .finish:
                        // The open window written, advertising stopped, the log synced.
                        await beacon.stop()
                        await beacon.session?.finish()
                        logger.notice(
                            "radio stopped",
                            metadata: ["reports.outsideWindows": "\(reports.outsideWindows)", "reports.droppedOnTheWay": "\(reports.droppedOnTheWay)"])
                    case .wait(let wait, let purpose):
                        if case .restart(let reason) = purpose {
                            logger.error("radio fault; starting again", metadata: ["reason": "\(reason)", "retryIn": "\(wait)"])
                        }
                        let monotonic = context.monotonic
                        group.addTask {
                            guard (try? await monotonic.sleep(for: wait)) != nil else { return }
                            sink.yield(.event(.waited(purpose)))
                        }
                    case .reportStarting: context.status.set(.starting)
                    case .reportActive: context.status.set(.active)
                    case .reportOff(let reason): context.status.set(.bluetoothOff, reason: reason)
                    case .end: break loop
                    }
                }
            }
            held.link?.link.close()
            sink.finish()
            group.cancelAll()
        }
    }

    /// Opens the link and reads it in a child task; the machine's answer.
    private func connect(
        _ held: inout Held, machine: inout BeaconMachine, group: inout TaskGroup<Void>, sink: AsyncStream<BeaconInput>.Continuation, since: Stopwatch
    ) async -> [BeaconMachine.Action] {
        let link: Backend.Link
        do {
            link = try await backend.connect(reports: reports)
        } catch {
            let answer = machine.handle(.unreachable)
            let retryIn = answer.compactMap { if case .wait(let wait, _) = $0 { wait } else { nil } }.first ?? .zero
            held.unreachable.failed(
                "\(backend.linkName) unreachable; retrying until it answers", metadata: ["error": "\(error)", "retryIn": "\(retryIn)"], logger: logger)
            return answer
        }
        held.unreachable.recovered("\(backend.linkName) reachable again", logger: logger)
        held.links += 1
        let generation = held.links
        held.link = (generation, link)
        let events = BeaconEvents(sink: sink, generation: generation, since: since)
        group.addTask {
            await link.run(events: events)
            events.tell(.lost)
        }
        return machine.handle(.connected)
    }

    /// Runs the beacon on the link until it fails: the fault's reason, or nil when the link ended
    /// (its end tells that) or the run was stopped.
    private func operate(_ link: Backend.Link, beacon: BeaconRun, generation: Int, sink: AsyncStream<BeaconInput>.Continuation) async -> String? {
        do {
            let session = try context.session(on: try await link.radio())
            // The previous session's window (if any) was written when it stopped.
            beacon.set(session)
            reports.set(session.scanner)
            let (keys, logger, linkName) = (context.keys, logger, backend.linkName)
            try await session.run {
                sink.yield(.run(generation, .advertising))
                let key = try? await keys.currentKey()
                logger.notice(
                    "advertising", metadata: ["via": "\(linkName)", "key.rollingStart": "\(key.map { "\($0.rollingStartIntervalNumber)" } ?? "?")"])
            }
            return nil
        } catch is CancellationError {
            return nil
        } catch {
            return link.fault(for: error)
        }
    }
}

extension BeaconMachine {
    /// The actions for a series of answers.
    mutating func handle(events: [Event]) -> [Action] {
        var actions: [Action] = []
        for event in events { actions += handle(event) }
        return actions
    }
}
