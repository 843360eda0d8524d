// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles

/// One UTC day of SwissCovid's check.
package struct PerDayResult: Hashable, Sendable {
    package var day: UTCDay
    /// Minutes below the first threshold (low) and between the two (medium): the day's seconds in
    /// each bucket, rounded up to whole minutes.
    package var lowMinutes: Double
    package var mediumMinutes: Double
    /// low × factorLow + medium × factorMedium.
    package var weightedMinutes: Double
    /// Whether the weighted minutes reach the trigger (and are above 0).
    package var exposed: Bool

    package init(day: UTCDay, lowMinutes: Double, mediumMinutes: Double, weightedMinutes: Double, exposed: Bool) {
        self.day = day
        self.lowMinutes = lowMinutes
        self.mediumMinutes = mediumMinutes
        self.weightedMinutes = weightedMinutes
        self.exposed = exposed
    }
}

/// SwissCovid's per-day attenuation-duration check over the exposure windows, as DP-3T's v2 SDKs
/// apply it (dp3t-sdk-android `ExposureWindowMatchingWorker.kt`, dp3t-sdk-ios
/// `Matching/ExposureWindow.swift` and `ExposureNotificationMatcher.swift`):
///
/// - every scan instance of every window of a UTC day counts its secondsSinceLastScan as low when
///   its typical attenuation is below the first threshold, medium when below the second (`<`
///   edges), nothing otherwise; the day's seconds are summed over all its windows first;
/// - each bucket's seconds are rounded up to whole minutes once per day, with no cap (the 30-minute
///   cap applies only where a v1 configuration is scored: the v1 frameworks capped each
///   attenuation duration at 30 minutes);
/// - a day is judged only while it is one of the last `daysConsidered` UTC days, today included,
///   when its windows were matched (DP-3T decides a day when the windows arrive and keeps the
///   verdict; gaend keeps the windows and decides again, so a window is counted against the day of
///   its match);
/// - REVOKED windows, and windows whose report type is unknown and unmapped, do not count: gaend's
///   stored results carry revocations DP-3T's windows never did.
package enum PerDayCheck {
    package static func results(_ windows: [ExposureWindow], configuration: PerDayConfiguration, today: UTCDay) -> [PerDayResult] {
        var seconds: [UTCDay: (low: Int, medium: Int)] = [:]
        for window in windows where ReportTypeKey(rawValue: Int(window.reportType.rawValue)) != nil {
            let judgedOn = window.matchedAt.map(UTCDay.init(containing:)) ?? today
            guard window.day.distance(to: judgedOn) < Int64(configuration.daysConsidered) else { continue }
            var sums = seconds[window.day] ?? (0, 0)
            for instance in window.scanInstances {
                if instance.typicalAttenuation < configuration.attenuationThresholds[0] {
                    sums.low += instance.secondsSinceLastScan
                } else if instance.typicalAttenuation < configuration.attenuationThresholds[1] {
                    sums.medium += instance.secondsSinceLastScan
                }
            }
            seconds[window.day] = sums
        }
        return seconds.keys.sorted().map { day in
            func minutes(_ seconds: Int) -> Double {
                let rounded = (Double(seconds) / 60).rounded(.up)
                return configuration.minutesCap.map { min($0, rounded) } ?? rounded
            }
            let low = minutes(seconds[day]!.low)
            let medium = minutes(seconds[day]!.medium)
            let weighted = low * configuration.factorLow + medium * configuration.factorMedium
            return PerDayResult(
                day: day, lowMinutes: low, mediumMinutes: medium, weightedMinutes: weighted,
                exposed: weighted > 0 && weighted >= configuration.triggerThreshold)
        }
    }
}
