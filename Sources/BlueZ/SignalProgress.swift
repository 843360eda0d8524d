// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// How far a consumer of a signal stream has got (by `DBusMessage.sequence`), and waits for it to
/// get somewhere: the barrier that makes a scan window close only after the sightings bluetoothd
/// sent before StopDiscovery's reply have reached the scanner.
package final class SignalProgress: Sendable {
    private struct State {
        var processed: UInt64 = 0
        var ended = false
        var waiters: [(id: UInt64, target: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// The consumer has handled everything up to `sequence`.
    package func processed(_ sequence: UInt64) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.processed = max(state.processed, sequence)
            let (done, waiting) = (state.waiters.filter { $0.target <= state.processed }, state.waiters.filter { $0.target > state.processed })
            state.waiters = waiting
            return done.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// The stream ended: nothing more will be processed, nobody waits for it.
    package func end() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for continuation in waiters { continuation.resume() }
    }

    /// Returns once `target` is processed, the stream ended, or the task is cancelled.
    package func wait(until target: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.ended || state.processed >= target || Task.isCancelled { return true }
                    state.waiters.append((id, target, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            // Resumed here or by `processed`/`end`, whichever takes it out of the list first.
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            continuation?.resume()
        }
    }
}
