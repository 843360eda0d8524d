// SPDX-License-Identifier: GPL-3.0-or-later

package import ClockTrust
package import ENCore
import Synchronization

/// The three clocks a `ClockTrustBoard` reads, set by the test: the wall clock steps apart from
/// the boot clock, both advance together, and the kernel's synchronization is a switch.
package final class ManualClockReadings: ClockReadings {
    private struct State {
        var wall: UnixTime
        var boot: Int64
        var synchronized: Bool
    }

    private let state: Mutex<State>
    package let bootID: String?

    package init(wall: UnixTime, boot: Int64 = 5_000, synchronized: Bool = false, bootID: String? = "0f6a1c9e-2d3b-4c5d-8e7f-123456789abc") {
        state = Mutex(State(wall: wall, boot: boot, synchronized: synchronized))
        self.bootID = bootID
    }

    package func wall() -> UnixTime { state.withLock { $0.wall } }
    package func boot() -> Int64 { state.withLock { $0.boot } }
    package func kernelSynchronized() -> Bool { state.withLock { $0.synchronized } }

    /// Time passes: both clocks move on.
    package func advance(milliseconds: Int64) {
        state.withLock {
            $0.wall = UnixTime(milliseconds: $0.wall.milliseconds + milliseconds)
            $0.boot += milliseconds
        }
    }

    /// The wall clock is set (a step); the boot clock does not move.
    package func step(milliseconds: Int64) {
        state.withLock { $0.wall = UnixTime(milliseconds: $0.wall.milliseconds + milliseconds) }
    }

    package func synchronize(_ synchronized: Bool) { state.withLock { $0.synchronized = synchronized } }
}
