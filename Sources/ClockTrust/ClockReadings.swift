// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import SystemCalls

/// The three clocks trust is judged on, read together: production reads the kernel's, tests set
/// their own and step them.
package protocol ClockReadings: Sendable {
    /// The wall clock (CLOCK_REALTIME): it can be set, and may be wrong.
    func wall() -> UnixTime
    /// The boot clock in milliseconds (CLOCK_BOOTTIME): never set, counts suspend, 0 at boot.
    func boot() -> Int64
    /// Whether a time daemon keeps the wall clock synchronized.
    func kernelSynchronized() -> Bool
    /// This boot's id: a boot-clock time from another boot means nothing.
    var bootID: String? { get }
}

/// The kernel's clocks.
package struct SystemClockReadings: ClockReadings {
    package let bootID: String?
    private let wallClock = SystemWallClock()

    package init() {
        bootID = KernelClock.bootID()
    }

    package func wall() -> UnixTime { wallClock.now() }
    package func boot() -> Int64 { KernelClock.bootMilliseconds() }
    package func kernelSynchronized() -> Bool { KernelClock.synchronization().synchronized }
}
