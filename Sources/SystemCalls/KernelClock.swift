// SPDX-License-Identifier: GPL-3.0-or-later

internal import CKernelClock
import Glibc

/// What the kernel knows of its clocks: whether a time daemon keeps the real-time clock
/// synchronized, the boot clock, and the boot's id.
package enum KernelClock {
    /// The kernel's NTP state, as adjtimex(2) with no modes reads it.
    package struct Synchronization: Sendable, Equatable {
        /// The largest error the kernel thinks its clock has, in microseconds. A time daemon sets it
        /// at each update; the kernel adds 500 µs a second and stops at 16 s, where it sets STA_UNSYNC.
        package var maximumErrorMicroseconds: Int
        /// STA_UNSYNC: the kernel's own "not synchronized" bit.
        package var unsynchronizedBit: Bool

        package init(maximumErrorMicroseconds: Int, unsynchronizedBit: Bool) {
            self.maximumErrorMicroseconds = maximumErrorMicroseconds
            self.unsynchronizedBit = unsynchronizedBit
        }

        /// Synchronized when either sign a time daemon leaves says so: STA_UNSYNC cleared (what
        /// ntpd and systemd-timesyncd do when they set the clock), or a maximum error below 16 s,
        /// systemd's rule (`ntp_synced()`, src/basic/time-util.c, what `timedatectl` shows as
        /// "System clock synchronized"), which covers chrony: it keeps STA_UNSYNC set unless
        /// `rtcsync` is on, so that the kernel's 11-minute mode leaves the RTC alone. The kernel
        /// itself sets STA_UNSYNC and 16 s when no daemon has updated it for hours, so an unkept
        /// clock fails both.
        package var synchronized: Bool { !unsynchronizedBit || maximumErrorMicroseconds < 16_000_000 }
    }

    /// The kernel's NTP state now (a clock the kernel cannot read counts as unsynchronized).
    package static func synchronization() -> Synchronization {
        var state = timex()
        guard adjtimex(&state) >= 0 else { return Synchronization(maximumErrorMicroseconds: 16_000_000, unsynchronizedBit: true) }
        return Synchronization(maximumErrorMicroseconds: Int(state.maxerror), unsynchronizedBit: state.status & Int32(STA_UNSYNC) != 0)
    }

    /// CLOCK_BOOTTIME in milliseconds: monotonic, counts suspend, starts at 0 at each boot.
    package static func bootMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// This boot's id (/proc/sys/kernel/random/boot_id), nil when it cannot be read.
    package static func bootID() -> String? {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "re") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let id = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingSuffix(while: { $0 == "\n" })
        return id.count == 36 ? id : nil
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var result = self
        while let last = result.last, predicate(last) { result.removeLast() }
        return result
    }
}
