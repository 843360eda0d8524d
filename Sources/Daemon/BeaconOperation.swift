// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import Conditions
import Logging

/// The running beacon of a radio service, one at a time: the driver starts it as a child of its
/// task group (`begin`, then `run` in the child), stops it on the machine's `.stopBeacon` and waits
/// for its end. The session it made stays for the scanner's reports and for writing the open
/// window once it stopped. An outcome of a run that was stopped is dropped: the machine asked for
/// the stop and expects no news of it.
final class BeaconOperation: Sendable {
    private struct State {
        var generation = 0
        var running = false
        var stopping = false
        var session: BeaconSession?
    }

    private let state = ConditionLock(State())

    var session: BeaconSession? { state.withLock { $0.session } }
    var scanner: Scanner? { session?.scanner }

    /// The run's generation now: an outcome of another is stale.
    var generation: Int { state.withLock { $0.generation } }

    func set(_ session: BeaconSession) { state.withLock { $0.session = session } }

    /// Marks a run as started, before its child task is added (so a stop asked meanwhile waits for it).
    func begin() -> Int {
        state.withLock { state in
            state.generation += 1
            state.running = true
            state.stopping = false
            return state.generation
        }
    }

    /// Runs `body` until it returns or `stop()` asks it to end; its outcome, or nil when stopped.
    func run(_ body: @escaping @Sendable () async -> BeaconMachine.Event?) async -> BeaconMachine.Event? {
        let outcome = await withTaskGroup(of: BeaconMachine.Event?.self) { group -> BeaconMachine.Event? in
            group.addTask { await body() }
            group.addTask {
                await self.state.wait { $0.stopping }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let stopped = state.withLock { state in
            defer {
                state.running = false
                state.stopping = false
            }
            return state.stopping
        }
        return stopped ? nil : outcome
    }

    /// Ends the running beacon, if one runs, and returns once it has ended.
    func stop() async {
        let running = state.withLock { state in
            if state.running { state.stopping = true }
            return state.running
        }
        guard running else { return }
        await state.wait(cancellable: false) { !$0.running }
    }
}

/// What a radio service's loop takes in: the machine's events, and those of one connection or one
/// run of the beacon tagged with it (news of a connection closed or a run stopped is stale).
enum BeaconInput: Sendable {
    case event(BeaconMachine.Event)
    case connection(Int, BeaconMachine.Event)
    case operation(Int, BeaconMachine.Event)
}

extension BeaconService {
    /// Carries out the actions both back ends carry out alike: the running beacon (started as a
    /// child of `group`, running `body`), the waits and the status. False for a back end's own.
    func performShared(
        _ action: BeaconMachine.Action, operation: BeaconOperation, group: inout TaskGroup<Void>, sink: AsyncStream<BeaconInput>.Continuation,
        run body: @escaping @Sendable () async -> BeaconMachine.Event?
    ) async -> Bool {
        switch action {
        case .startBeacon:
            let generation = operation.begin()
            group.addTask {
                if let outcome = await operation.run(body) { sink.yield(.operation(generation, outcome)) }
            }
        case .stopBeacon:
            await operation.stop()
            await operation.session?.interrupt()
        case .finish:
            // The open window written, advertising stopped, the log synced.
            await operation.stop()
            await operation.session?.finish()
            logger.notice("radio stopped")
        case .wait(let wait, let purpose):
            if case .restart(let reason) = purpose {
                logger.error("radio fault; starting again", metadata: ["reason": "\(reason)", "retryIn": "\(wait)"])
            }
            let monotonic = monotonic
            group.addTask {
                guard (try? await monotonic.sleep(for: wait)) != nil else { return }
                sink.yield(.event(.waited))
            }
        case .reportStarting: status.set(.starting)
        case .reportActive: status.set(.active)
        case .reportOff(let reason): status.set(.bluetoothOff, reason: reason)
        default:
            return false
        }
        return true
    }

    /// Tells the machine each time the clock is set or its trust changes (not the state at start:
    /// the session reads the clock when it starts).
    func followClock(group: inout TaskGroup<Void>, sink: AsyncStream<BeaconInput>.Continuation) {
        guard let shifts = beacon.clockShifts else { return }
        group.addTask {
            var updates = shifts.updates().makeAsyncIterator()
            _ = await updates.next()
            while await updates.next() != nil { sink.yield(.event(.clockShifted)) }
        }
    }

    /// The machine's event for an input, or nil when it is stale.
    func current(_ input: BeaconInput, connection: Int?, operation: BeaconOperation) -> BeaconMachine.Event? {
        switch input {
        case .event(let event): event
        case .connection(let generation, let event): generation == connection ? event : nil
        case .operation(let generation, let event): generation == operation.generation ? event : nil
        }
    }
}
