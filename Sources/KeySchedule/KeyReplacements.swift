// SPDX-License-Identifier: GPL-3.0-or-later

package import Conditions
import Synchronization

/// How many times the key on the air was replaced before its time (a release, a reset), and a
/// wait for the next: what the beacon's timeline races its sleeps against, so that it rotates at
/// once, never on a timer of its own.
package final class KeyReplacements: Sendable {
    private let count = Mutex(0)
    private let changes = Changes()

    package init() {}

    /// The replacements so far.
    package var current: Int { count.withLock { $0 } }

    func record() {
        count.withLock { $0 += 1 }
        changes.signal()
    }

    /// Returns once there have been more than `seen` replacements (at once when there already
    /// are), or when the task is cancelled.
    package func wait(past seen: Int) async {
        for await _ in changes.updates() where current > seen { return }
    }
}
