// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// "Something I own changed": what an owner of state tells whoever shows it, so that they read it
/// again then and not on a timer. A follower gets no value, only the notice: it reads the owner's
/// state, and a burst of changes it has not yet taken is one notice (the stream keeps the newest).
package final class Changes: Sendable {
    private let followers = Mutex<(next: Int, continuations: [Int: AsyncStream<Void>.Continuation])>((0, [:]))

    package init() {}

    /// The owner's state changed.
    package func signal() {
        for continuation in followers.withLock({ Array($0.continuations.values) }) { continuation.yield() }
    }

    /// One notice now (to read the state as it is), then one after each `signal`.
    package func updates() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = followers.withLock { followers in
            defer { followers.next += 1 }
            followers.continuations[followers.next] = continuation
            return followers.next
        }
        continuation.yield()
        continuation.onTermination = { [weak self] _ in self?.followers.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }
}
