// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// A value others follow: read it, or take its updates (the current value first, then each
/// change). Behind the radio status, the enablement gate and every `Changes`.
package final class ObservedValue<Value: Equatable & Sendable>: Sendable {
    private let state: Mutex<(value: Value, continuations: [Int: AsyncStream<Value>.Continuation], next: Int)>

    package init(_ value: Value) {
        state = Mutex((value, [:], 0))
    }

    package var value: Value { state.withLock { $0.value } }

    /// Sets the value; returns whether it changed (followers hear only changes).
    @discardableResult
    package func set(_ value: Value) -> Bool {
        let continuations = state.withLock { state -> [AsyncStream<Value>.Continuation]? in
            guard state.value != value else { return nil }
            state.value = value
            return Array(state.continuations.values)
        }
        guard let continuations else { return false }
        for continuation in continuations { continuation.yield(value) }
        return true
    }

    package func updates() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            continuation.yield(state.value)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }
}
