// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// When the exposure hook runs, as a pure value: when the answer gains an exposure day it did not
/// have when last told (`exposed`), and when the last exposure day ages out of the 14 days
/// (`cleared`). A day that ages out while others stay, or a run that finds nothing new, tells
/// nothing. `told` is kept in the data directory, so a restart does not tell the same days again.
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

    /// The event the answer's `days` make, with the days new since the last, or nil.
    package mutating func consider(_ days: [UTCDay]) -> (event: Event, newDays: [UTCDay])? {
        let previous = Set(told)
        told = days
        let new = days.filter { !previous.contains($0) }
        if !new.isEmpty { return (.exposed, new) }
        if days.isEmpty && !previous.isEmpty { return (.cleared, []) }
        return nil
    }
}
