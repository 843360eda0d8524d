// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// A monotonic instant of the test clocks: a count of nanoseconds from zero.
package struct TestInstant: InstantProtocol, Sendable {
    package var offset: Duration

    package init(offset: Duration) { self.offset = offset }

    package func advanced(by duration: Duration) -> TestInstant { TestInstant(offset: offset + duration) }
    package func duration(to other: TestInstant) -> Duration { other.offset - offset }
    package static func < (lhs: TestInstant, rhs: TestInstant) -> Bool { lhs.offset < rhs.offset }
}

/// A clock whose sleeps return at once: each records how long it was asked to sleep and moves the
/// clock's time to its deadline. With `limit`, every sleep past that many is still recorded but
/// throws CancellationError, which ends a loop that sleeps between rounds (a timer, a backoff).
package final class RecordingClock: Clock, Sendable {
    private let state = Mutex((now: TestInstant(offset: .zero), sleeps: [Duration]()))
    private let limit: Int?

    package init(limit: Int? = nil) { self.limit = limit }

    package var now: TestInstant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .nanoseconds(1) }

    /// The durations slept, in order.
    package var recorded: [Duration] { state.withLock { $0.sleeps } }

    package func sleep(until deadline: TestInstant, tolerance: Duration? = nil) async throws {
        try state.withLock { state in
            state.sleeps.append(max(.zero, state.now.duration(to: deadline)))
            if let limit, state.sleeps.count > limit { throw CancellationError() }
            if state.now < deadline { state.now = deadline }
        }
    }
}

/// A clock that moves only when the test advances it: a sleep waits until `advance` passes its
/// deadline, or throws CancellationError when its task is cancelled. A clock never advanced is a
/// time that never comes (a deadline that never passes).
package final class TestClock: Clock, Sendable {
    private struct Sleeper {
        var id: Int
        var deadline: TestInstant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let state = Mutex((now: TestInstant(offset: .zero), sleepers: [Sleeper](), nextID: 0))

    package init() {}

    package var now: TestInstant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .nanoseconds(1) }

    /// How many sleeps are waiting: how a test knows the code under test has reached its sleep.
    package var waiting: Int { state.withLock { $0.sleepers.count } }

    /// When the waiting sleeps end, as offsets from the clock's start, earliest first: which sleep
    /// the code under test is in.
    package var deadlines: [Duration] { state.withLock { $0.sleepers.map(\.deadline.offset).sorted() } }

    package func sleep(until deadline: TestInstant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || deadline <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves time on by `duration` and wakes every sleep whose deadline it reaches.
    package func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }
}
