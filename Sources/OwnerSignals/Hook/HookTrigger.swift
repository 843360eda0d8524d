// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// When the exposure hook runs, as a pure value: when the answer gains an exposure day it did not
/// have when last told (`exposed`), and when the last exposure day ages out of the 14 days
/// (`cleared`). A day that ages out while others stay, or a run that finds nothing new, tells
/// nothing. `told` is kept in the data directory, so a restart does not tell the same days again.
///
/// A decision is only committed once the hook told the owner (it exited 0): a hook that failed,
/// was missing or was cut off by a stop leaves `told` as it was, so the same news is decided again
/// at the next look (issue 40, item 7).
package struct HookTrigger: Sendable, Equatable {
    package enum Event: String, Sendable {
        case exposed
        case cleared
    }

    /// The exposure days the owner was last told of (or that aged out since), oldest first.
    package private(set) var told: [UTCDay]

    package init(told: [UTCDay] = []) {
        self.told = told
    }

    /// The event the answer's `days` make, with the days new since the last told, or nil when
    /// there is nothing to tell.
    package func decide(_ days: [UTCDay]) -> (event: Event, newDays: [UTCDay])? {
        let previous = Set(told)
        let new = days.filter { !previous.contains($0) }
        if !new.isEmpty { return (.exposed, new) }
        if days.isEmpty && !previous.isEmpty { return (.cleared, []) }
        return nil
    }

    /// The owner now knows `days` (told by the hook, or nothing in them was news).
    package mutating func commit(_ days: [UTCDay]) {
        told = days
    }

    /// `decide`, committed at once: what a hook that always succeeds would make of `days`.
    package mutating func consider(_ days: [UTCDay]) -> (event: Event, newDays: [UTCDay])? {
        defer { commit(days) }
        return decide(days)
    }
}

/// The retries of a hook that did not tell: after a failure the same news waits for its retry
/// (a minute, doubling to an hour), however many looks come meanwhile (a detection alone makes
/// several); different news runs at once.
package struct HookRetry: Sendable, Equatable {
    package private(set) var failures = 0
    /// The news that failed, while its retry is not due.
    private var waiting: [UTCDay]?

    package init() {}

    /// How long after `failures` failed runs the hook is tried again.
    package static func delay(afterFailures failures: Int) -> Duration {
        .seconds(min(3600, 60 << min(max(failures - 1, 0), 6)))
    }

    /// Whether news about `days` may run now.
    package func allows(_ days: [UTCDay]) -> Bool { waiting != days }

    /// A run about `days` failed: the delay until its retry.
    package mutating func failed(_ days: [UTCDay]) -> Duration {
        failures += 1
        waiting = days
        return Self.delay(afterFailures: failures)
    }

    /// The retry is due.
    package mutating func due() { waiting = nil }

    /// The owner was told.
    package mutating func told() {
        failures = 0
        waiting = nil
    }
}
