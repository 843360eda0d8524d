// SPDX-License-Identifier: GPL-3.0-or-later

import Beacon
import Conditions
import ENCore
package import OwnerSignals

extension Manager: OwnerStatusSource {
    nonisolated package func followStatus(ticks: any Clock<Duration>, _ changed: @escaping @Sendable () -> Void) async {
        await followChanges(radioStatus: radioStatus, gate: gate, ticks: ticks, changed)
    }

    /// Calls `changed` whenever a property may have changed: the radio's status, the owner's
    /// switch, each change source's notice, and the next change by time alone (midnight, the
    /// detection budget), waited for on `ticks`. Until cancelled. Manager1's announcements and the
    /// indicator LED follow the same.
    nonisolated func followChanges(
        radioStatus: RadioStatusBoard, gate: EnablementGate, ticks: any Clock<Duration>, _ changed: @escaping @Sendable () -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in radioStatus.updates() { changed() }
            }
            group.addTask {
                for await _ in gate.updates() { changed() }
            }
            for source in changeSources {
                group.addTask {
                    for await _ in source.updates() { changed() }
                }
            }
            group.addTask {
                // Time alone: wait until the next such change, then read everything again. The
                // moment is read again after each wake (a run may have moved it; the wall clock
                // may have stepped).
                while !Task.isCancelled {
                    let next = await self.nextTimedChange()
                    let seconds = max(1, (next.milliseconds - self.clock.now().milliseconds + 999) / 1000)
                    try? await ticks.sleep(for: .seconds(seconds))
                    changed()
                }
            }
            await group.waitForAll()
        }
    }
}
