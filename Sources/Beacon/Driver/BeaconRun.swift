// SPDX-License-Identifier: GPL-3.0-or-later

import Conditions

/// The running beacon of a driver, one at a time: the driver starts it as a child of its task
/// group (`begin`, then `run` in the child), stops it on the machine's `.stopBeacon` and waits for
/// its end. The session it made stays for writing the open window once it stopped. An outcome of
/// a run that was stopped is dropped: the machine asked for the stop and expects no news of it.
final class BeaconRun: Sendable {
    private struct State {
        var generation = 0
        var running = false
        var stopping = false
        var session: BeaconSession?
    }

    private let state = ConditionLock(State())

    var session: BeaconSession? { state.withLock { $0.session } }

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

    /// Runs `body` until it returns or `stop()` asks it to end; its fault, or nil when stopped.
    func run(_ body: @escaping @Sendable () async -> String?) async -> String? {
        let outcome = await withTaskGroup(of: String?.self) { group -> String? in
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
