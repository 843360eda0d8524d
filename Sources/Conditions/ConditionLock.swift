// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// State under a lock that tasks can wait on, the package's one cancellable waiter: `wait(until:)`
/// returns once a condition on the state holds, or at once when the task is cancelled. Every
/// `withLock` wakes the waiters whose condition then holds, after the lock is let go, so a change
/// and the waiters it satisfies can never miss each other.
///
/// Continuations are resumed outside the lock: a resumed task may run at once on this thread and
/// take the lock again, and a cancellation handler takes it too.
package final class ConditionLock<State>: Sendable {
    private struct Waiter {
        let isSatisfied: @Sendable (borrowing State) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct Storage {
        var state: State
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let storage: Mutex<Storage>

    package init(_ state: sending State) {
        storage = Mutex(Storage(state: state))
    }

    /// Reads or changes the state; then wakes the waiters its new value satisfies.
    package func withLock<Result, E: Error>(_ body: (inout sending State) throws(E) -> sending Result) throws(E) -> sending Result {
        var woken: [CheckedContinuation<Void, Never>] = []
        let result = try storage.withLock { (storage) throws(E) -> sending Result in
            let result = try body(&storage.state)
            if !storage.waiters.isEmpty {
                for (id, waiter) in storage.waiters where waiter.isSatisfied(storage.state) {
                    woken.append(waiter.continuation)
                    storage.waiters[id] = nil
                }
            }
            return result
        }
        for continuation in woken { continuation.resume() }
        return result
    }

    /// Returns once `condition` holds (it is checked now and after every `withLock`), or when the
    /// task is cancelled: the caller checks which if it matters. With `cancellable: false` only the
    /// condition ends the wait, for a caller whose turn must be kept though its task was cancelled.
    package func wait(cancellable: Bool = true, until condition: @escaping @Sendable (borrowing State) -> Bool) async {
        let id = storage.withLock { storage in
            defer { storage.nextID += 1 }
            return storage.nextID
        }
        guard cancellable else { return await suspend(id, cancellable: false, until: condition) }
        await withTaskCancellationHandler {
            await suspend(id, cancellable: true, until: condition)
        } onCancel: {
            // Resumed here or by `withLock`, whichever takes it out of the table first.
            storage.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    private func suspend(_ id: UInt64, cancellable: Bool, until condition: @escaping @Sendable (borrowing State) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = storage.withLock { storage -> Bool in
                if (cancellable && Task.isCancelled) || condition(storage.state) { return true }
                storage.waiters[id] = Waiter(isSatisfied: condition, continuation: continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
