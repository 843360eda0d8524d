// SPDX-License-Identifier: GPL-3.0-or-later

internal import CKernelClock
import Glibc

/// Tells when the real-time clock is set (settimeofday, clock_settime, a time daemon's step, a
/// `date -s`), when it happens, without polling: a timerfd on CLOCK_REALTIME armed with
/// TFD_TIMER_CANCEL_ON_SET far in the future, whose read fails with ECANCELED once the clock is set
/// (timerfd_create(2)). Slewing (adjtime, adjtimex offsets) is not a set and is not told. It owns
/// the timerfd; its reader (a `DescriptorThread`) waits for `descriptor` and calls `consume`.
package final class WallClockSteps: Sendable {
    /// Readable when the clock was set.
    package let descriptor: Int32

    package init() throws(Errno) {
        descriptor = try SystemCall.retrying { timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
        do {
            try Self.arm(descriptor)
        } catch {
            SystemCall.close(descriptor)
            throw error
        }
    }

    deinit {
        SystemCall.close(descriptor)
    }

    /// Reads the timer once it is readable: true when the clock was set. It is armed again before
    /// this returns, so no set between two reads is missed.
    package func consume() throws(Errno) -> Bool {
        var expirations: UInt64 = 0
        let read = withUnsafeMutableBytes(of: &expirations) { raw in Result { () throws(Errno) in try SystemCall.read(descriptor, into: raw) } }
        switch read {
        case .failure(.canceled):
            try Self.arm(descriptor)
            return true
        case .failure(.wouldBlock), .failure(.interrupted):
            return false
        case .failure(let error):
            throw error
        case .success:
            // The far deadline itself passed (a clock set past it without the cancel): arm again.
            try Self.arm(descriptor)
            return false
        }
    }

    /// Absolute expiry ten years from now, cancelled by any set of the clock.
    private static func arm(_ timer: Int32) throws(Errno) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var spec = itimerspec()
        spec.it_value.tv_sec = now.tv_sec + 10 * 366 * 86_400
        _ = try SystemCall.retrying { timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET), &spec, nil) }
    }
}
