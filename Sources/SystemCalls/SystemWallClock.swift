// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import Glibc

/// The system's real-time clock (`CLOCK_REALTIME`): what production code injects where a `WallClock`
/// is wanted. It can jump; code that measures durations uses a monotonic clock instead.
package struct SystemWallClock: WallClock {
    package init() {}

    package func now() -> UnixTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UnixTime(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
