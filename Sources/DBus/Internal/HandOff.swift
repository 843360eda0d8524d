// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// A value handed from the pump thread to the task awaiting it.
///
/// The value travels through a mutex and the continuation carries only the wake-up. The
/// continuation alone would order the two sides too, but when the pump resumes it before the task
/// has suspended, the runtime takes a fast path that ThreadSanitizer does not see, and the task's
/// first read of the value was reported as a race against the pump's write of it (docs/testing.md,
/// "Sanitizers"). A mutex is an order TSan sees (Swift's through testbed/sanitizers/mutex_tsan.c).
final class HandOff<Value: Sendable>: Sendable {
    private let slot = Mutex<Value?>(nil)

    /// Waits for `start` to be given the value through the closure it receives.
    static func await(_ start: (@escaping @Sendable (Value) -> Void) -> Void) async -> Value {
        let handOff = HandOff()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            start { value in
                handOff.slot.withLock { $0 = value }
                continuation.resume()
            }
        }
        // The closure ran exactly once before the resume, so the slot holds the value.
        return handOff.slot.withLock { $0.take()! }
    }
}
