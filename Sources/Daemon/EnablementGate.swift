// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// Whether Exposure Notification is on: set by the manager (SetEnabled), followed by the radio
/// services, which advertise and scan only while it is.
public final class EnablementGate: Sendable {
    private let state: Mutex<(enabled: Bool, continuations: [Int: AsyncStream<Bool>.Continuation], next: Int)>

    public init(enabled: Bool) {
        state = Mutex((enabled, [:], 0))
    }

    public var isEnabled: Bool { state.withLock { $0.enabled } }

    public func set(_ enabled: Bool) {
        let continuations = state.withLock { state -> [AsyncStream<Bool>.Continuation] in
            guard state.enabled != enabled else { return [] }
            state.enabled = enabled
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.yield(enabled) }
    }

    /// The current value, then each change.
    public func updates() -> AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream<Bool>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            continuation.yield(state.enabled)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }

    /// Returns when the gate has `value` (at once if it has).
    public func wait(for value: Bool) async {
        for await enabled in updates() where enabled == value { return }
    }
}
