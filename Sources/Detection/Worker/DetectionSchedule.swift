// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore

/// When detection may and will run (issue 48): the budget of runs in any 24 hours by the
/// configuration's mode (6 with windows, 20 in v1 mode, as the frameworks allow), the timer's
/// interval and jitter, and the timer's next run. Pure: the worker hands it the runs counted
/// (`DetectionBudget` keeps them on disk), the time and a draw from its random source, so every
/// rule is tested by tables (`DetectionScheduleTests`).
package struct DetectionSchedule: Sendable, Equatable {
    /// The timer: every `interval`, moved by up to `jitter` either way.
    package var interval: Duration
    package var jitter: Duration
    /// Runs per 24 hours in v2 mode and in v1 mode.
    package var runsPerDayV2: Int
    package var runsPerDayV1: Int
    /// The window runs are counted in.
    package static let window: Int64 = 86_400

    package init(interval: Duration = .seconds(4 * 3600), jitter: Duration = .seconds(15 * 60), runsPerDayV2: Int = 6, runsPerDayV1: Int = 20) {
        self.interval = interval
        self.jitter = jitter
        self.runsPerDayV2 = runsPerDayV2
        self.runsPerDayV1 = runsPerDayV1
    }

    /// The budget of `configuration`'s mode: v1 when it has v1 weights alone.
    package func runsPerDay(_ configuration: ExposureConfiguration) -> Int {
        configuration.isV1Only ? runsPerDayV1 : runsPerDayV2
    }

    /// Runs left now, with `counted` runs in the window.
    package func remaining(counted: Int, _ configuration: ExposureConfiguration) -> Int {
        max(0, runsPerDay(configuration) - counted)
    }

    /// When the next run is allowed, given the runs counted in the window (oldest first); `nil`
    /// when one is allowed now: a day after the run that the one over the limit would replace.
    package static func nextAllowed(counted runs: [UnixTime], limit: Int) -> UnixTime? {
        guard runs.count >= limit, limit > 0 else { return nil }
        return runs[runs.count - limit].adding(seconds: window)
    }

    /// The draws the timer's jitter is taken from, in seconds; `nil` without jitter.
    package var jitterSeconds: ClosedRange<Int64>? {
        let seconds = Int64(jitter.components.seconds)
        return seconds > 0 ? -seconds...seconds : nil
    }

    /// The timer's delay: the interval moved by `offset` seconds (a draw from `jitterSeconds`,
    /// clamped to it).
    package func timerDelay(offset: Int64) -> Duration {
        guard let range = jitterSeconds else { return interval }
        return interval + .seconds(min(max(offset, range.lowerBound), range.upperBound))
    }

    /// When the timer runs next, `delay` from `now`, or later when the budget allows no run then,
    /// so that a spent budget moves the run rather than having it refused.
    package func nextRun(now: UnixTime, delay: Duration, counted runs: [UnixTime], _ configuration: ExposureConfiguration) -> UnixTime {
        let timed = now.adding(seconds: delay.components.seconds)
        guard let allowed = Self.nextAllowed(counted: runs, limit: runsPerDay(configuration)) else { return timed }
        return max(timed, allowed)
    }
}
