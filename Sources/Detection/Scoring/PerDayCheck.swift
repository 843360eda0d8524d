// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles

/// One UTC day of SwissCovid's check.
package struct PerDayResult: Hashable, Sendable {
    package var day: UTCDay
    /// Minutes below the first threshold and between the two, each capped at 30 as the framework
    /// reported them.
    package var lowMinutes: Double
    package var mediumMinutes: Double
    /// low × factorLow + medium × factorMedium.
    package var weightedMinutes: Double
    /// Whether the weighted minutes reach the trigger.
    package var exposed: Bool

    package init(day: UTCDay, lowMinutes: Double, mediumMinutes: Double, weightedMinutes: Double, exposed: Bool) {
        self.day = day
        self.lowMinutes = lowMinutes
        self.mediumMinutes = mediumMinutes
        self.weightedMinutes = weightedMinutes
        self.exposed = exposed
    }
}

/// SwissCovid's per-day attenuation-duration check over the exposure windows: each scan instance's
/// secondsSinceLastScan counts as low when its typical attenuation is below the first threshold,
/// medium when below the second (Google's `<` edges). REVOKED and unmapped windows do not count.
package enum PerDayCheck {
    package static func results(_ windows: [ExposureWindow], configuration: PerDayConfiguration) -> [PerDayResult] {
        var seconds: [UTCDay: (low: Double, medium: Double)] = [:]
        for window in windows where ReportTypeKey(rawValue: Int(window.reportType.rawValue)) != nil {
            for instance in window.scanInstances {
                if instance.typicalAttenuation < configuration.attenuationThresholds[0] {
                    seconds[window.day, default: (0, 0)].low += Double(instance.secondsSinceLastScan)
                } else if instance.typicalAttenuation < configuration.attenuationThresholds[1] {
                    seconds[window.day, default: (0, 0)].medium += Double(instance.secondsSinceLastScan)
                }
            }
        }
        return seconds.keys.sorted().map { day in
            let low = min(30, seconds[day]!.low / 60)
            let medium = min(30, seconds[day]!.medium / 60)
            let weighted = low * configuration.factorLow + medium * configuration.factorMedium
            return PerDayResult(
                day: day, lowMinutes: low, mediumMinutes: medium, weightedMinutes: weighted, exposed: weighted >= configuration.triggerThreshold)
        }
    }
}
