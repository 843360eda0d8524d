// SPDX-License-Identifier: GPL-3.0-or-later

package import Conditions
package import ENCore
import Synchronization

/// The daemon's wall clock with its verdict: `now()` reads the wall clock, `distrust` says why it
/// may not be trusted, as last judged. Judged again at a step of the clock, a witness, and the
/// clock service's slow look at the kernel (`reevaluate`); everything that keeps, broadcasts or
/// deletes by the clock reads `distrust` first.
package final class ClockTrustBoard: WallClock, Sendable {
    private struct State {
        var judge: ClockJudge
        var verdict: ClockVerdict
        var steps = 0
    }

    private let readings: any ClockReadings
    private let state: Mutex<State>
    /// Signalled when the verdict changes (trust, its reason, the offset by a second or more, a witness).
    package let changes = Changes()
    /// Signalled when the beacon must start over: trust gained or lost, or the clock set.
    package let shifts = Changes()

    package init(policy: ClockPolicy, readings: any ClockReadings) {
        self.readings = readings
        let judge = ClockJudge(policy: policy)
        let verdict = judge.verdict(wall: readings.wall(), boot: readings.boot(), kernelSynchronized: readings.kernelSynchronized())
        state = Mutex(State(judge: judge, verdict: verdict))
    }

    package var policy: ClockPolicy { state.withLock { $0.judge.policy } }
    package var verdict: ClockVerdict { state.withLock { $0.verdict } }
    /// Steps of the wall clock seen since start.
    package var steps: Int { state.withLock { $0.steps } }
    package var bootID: String? { readings.bootID }

    package func now() -> UnixTime { readings.wall() }
    package var distrust: String? { verdict.distrust }

    /// The boot clock now, in milliseconds.
    package func bootMilliseconds() -> Int64 { readings.boot() }

    /// What to add to a boot-clock time to make it a wall-clock time, read now.
    package func bootToWall() -> Int64 { readings.wall().milliseconds - readings.boot() }

    /// Judges the clock again; signals when the verdict changed. Returns the verdict.
    @discardableResult
    package func reevaluate() -> ClockVerdict {
        update { _ in }
    }

    /// The wall clock was set: judged again, and the beacon told to start over.
    @discardableResult
    package func stepped() -> ClockVerdict {
        let verdict = update { $0.steps += 1 }
        shifts.signal()
        return verdict
    }

    /// A server's `Date` heard now.
    @discardableResult
    package func witnessed(server: UnixTime) -> ClockVerdict {
        let boot = readings.boot()
        return update { $0.judge.witnessed(server: server, boot: boot) }
    }

    private func update(_ change: (inout State) -> Void) -> ClockVerdict {
        let (wall, boot, synchronized) = (readings.wall(), readings.boot(), readings.kernelSynchronized())
        let (old, new) = state.withLock { state in
            change(&state)
            let old = state.verdict
            state.verdict = state.judge.verdict(wall: wall, boot: boot, kernelSynchronized: synchronized)
            return (old, state.verdict)
        }
        if old.distrust != new.distrust || old.witnesses != new.witnesses || abs(old.offsetMilliseconds - new.offsetMilliseconds) >= 1000 {
            changes.signal()
        }
        if old.trusted != new.trusted { shifts.signal() }
        return new
    }
}
