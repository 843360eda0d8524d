// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// Who vouches for the wall clock (the `clock` key).
package enum ClockPolicy: String, Sendable, CaseIterable {
    /// The kernel: trusted while a time daemon (chrony, ntpd, systemd-timesyncd; GPS through chrony
    /// or gpsd) keeps it synchronized.
    case synchronized
    /// The owner: the system clock as set at boot (a battery-backed RTC, a manual setting).
    case system
}

/// What the clock may be used for now, and what the last witness said of it.
package struct ClockVerdict: Sendable, Equatable {
    /// Why the clock may not be trusted, nil when it may.
    package var distrust: String?
    /// The key server's time minus ours, in milliseconds, by the last witness (0 when none).
    package var offsetMilliseconds: Int64
    /// Answers with a Date seen since start.
    package var witnesses: Int

    package var trusted: Bool { distrust == nil }
}

/// Decides whether the wall clock may be trusted, from the policy, the kernel's synchronization and
/// the key server's `Date`: a pure value, fed readings, holding only the last witness.
///
/// The witness is Corona-Warn-App's rule (cwa-app-android PR #1985, `TimeVerification`): a server's
/// time more than 2 hours from ours makes the clock untrusted until a later answer agrees. The
/// witness is kept as the server's time and the boot clock when it was heard, so a step of the wall
/// clock after it is judged against the server's time carried forward on the boot clock.
package struct ClockJudge: Sendable {
    /// GAEN's tolerance: a phone matches RPIs within ±2 hours of their interval.
    package static let toleranceMilliseconds: Int64 = 2 * 3_600_000
    /// The kernel is not asked under `.system`.
    package static let notSynchronized = "the clock is not synchronized"

    package let policy: ClockPolicy
    private var witness: (server: UnixTime, boot: Int64)?
    private var witnesses = 0

    package init(policy: ClockPolicy) {
        self.policy = policy
    }

    /// A server's `Date` (`server`), heard at `boot` on the boot clock.
    package mutating func witnessed(server: UnixTime, boot: Int64) {
        witness = (server, boot)
        witnesses += 1
    }

    /// The verdict on the readings `wall`, `boot` and the kernel's synchronization.
    package func verdict(wall: UnixTime, boot: Int64, kernelSynchronized: Bool) -> ClockVerdict {
        var offset: Int64 = 0
        if let witness {
            offset = witness.server.milliseconds + (boot - witness.boot) - wall.milliseconds
        }
        var distrust: String?
        if policy == .synchronized && !kernelSynchronized {
            distrust = Self.notSynchronized
        } else if abs(offset) > Self.toleranceMilliseconds {
            distrust = "the clock is \(SpokenDuration.of(milliseconds: abs(offset))) \(offset > 0 ? "behind" : "ahead of") the key server"
        }
        return ClockVerdict(distrust: distrust, offsetMilliseconds: offset, witnesses: witnesses)
    }
}
