// SPDX-License-Identifier: GPL-3.0-or-later

/// Time elapsed since it was started, on an injected monotonic clock (the continuous clock, or a
/// test's): how a window measures its length without reading the wall clock twice, so a step of
/// the wall clock inside a window changes nothing.
package struct Stopwatch: Sendable {
    private let read: @Sendable () -> Duration

    /// Started now on `clock`.
    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        read = { start.duration(to: clock.now) }
    }

    package var elapsed: Duration { read() }
}
