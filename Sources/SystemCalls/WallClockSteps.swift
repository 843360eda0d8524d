// SPDX-License-Identifier: GPL-3.0-or-later

internal import CKernelClock
import Glibc

/// Tells when the real-time clock is set (settimeofday, clock_settime, a time daemon's step, a
/// `date -s`), when it happens, without polling: a timerfd on CLOCK_REALTIME armed with
/// TFD_TIMER_CANCEL_ON_SET far in the future, whose read fails with ECANCELED once the clock is set
/// (timerfd_create(2)). Slewing (adjtime, adjtimex offsets) is not a set and is not told. It owns
/// the timerfd and a wake channel; one thread waits in `wait()`.
package final class WallClockSteps: Sendable {
    private let timer: Int32
    private let wake: WakeChannel

    package init() throws(Errno) {
        timer = try SystemCall.retrying { timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
        do {
            wake = try WakeChannel()
            try Self.arm(timer)
        } catch {
            SystemCall.close(timer)
            throw error
        }
    }

    deinit {
        SystemCall.close(timer)
    }

    /// Blocks until the clock is set (true) or `cancel()` is called (false). The timer is armed
    /// again before it returns, so no set between two waits is missed.
    package func wait() throws(Errno) -> Bool {
        while true {
            let ready: [PollEvents]
            do {
                ready = try SystemCall.poll([(timer, .readable), (wake.descriptor, .readable)], milliseconds: -1)
            } catch  where error == .interrupted {
                continue
            }
            if !ready[1].isEmpty { return false }
            guard !ready[0].isEmpty else { continue }
            var expirations: UInt64 = 0
            let read = withUnsafeMutableBytes(of: &expirations) { raw in Result { () throws(Errno) in try SystemCall.read(timer, into: raw) } }
            switch read {
            case .failure(.canceled):
                try Self.arm(timer)
                return true
            case .failure(.wouldBlock):
                continue
            case .failure(let error):
                throw error
            case .success:
                // The far deadline itself passed (a clock set past it without the cancel): arm again.
                try Self.arm(timer)
            }
        }
    }

    /// Makes `wait()` return false, now or at its next call.
    package func cancel() {
        wake.wake()
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
