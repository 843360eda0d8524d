// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles

/// Corona-Warn-App's own rule over exposure windows: its `riskCalculationParameters`
/// (cwa-app-android `risk_calculation_parameters.proto`), decided as the apps decide it
/// (docs/detection.md, "Corona-Warn-App"): cwa-app-android `risk/DefaultRiskLevels.kt` and
/// `risk/ExposureWindowsFilter.kt`, cwa-app-ios `RiskCalculation.swift` (`Services/Risk/Calculation`)
/// and `RiskCalculationExposureWindow.swift`. The two apps differ in three places, and the
/// configuration's shape says which app's code is followed (`Platform`).
package struct CoronaWarnAppRiskParameters: Hashable, Sendable {
    /// Which app's code decides the three places they differ.
    package enum Platform: String, Hashable, Sendable {
        /// `ApplicationConfigurationAndroid`: the day's normalized time rounded to one decimal
        /// before its risk level is looked up; the minutes at an attenuation compared as a
        /// fraction; encounters counted on days that have a risk level only.
        case android
        /// `ApplicationConfigurationIOS`: the day's sum as it is; the minutes at an attenuation in
        /// whole minutes (Swift's integer division of seconds by 60); encounters counted on every
        /// day with a window of that level, whether the day has a risk level or not.
        case ios
    }

    /// CWA's `Range`: `min` and `max`, each inclusive unless said exclusive.
    package struct Range: Hashable, Sendable {
        package var min: Double
        package var max: Double
        package var minExclusive: Bool
        package var maxExclusive: Bool

        package init(min: Double, max: Double, minExclusive: Bool = false, maxExclusive: Bool = false) {
            self.min = min
            self.max = max
            self.minExclusive = minExclusive
            self.maxExclusive = maxExclusive
        }

        /// DefaultRiskLevels' `inRange`, ENARange's `contains`.
        package func contains(_ value: Double) -> Bool {
            if minExclusive ? value <= min : value < min { return false }
            if maxExclusive ? value >= max : value > max { return false }
            return true
        }
    }

    /// `NormalizedTimeToRiskLevelMapping.RiskLevel`.
    package enum RiskLevel: Int, Hashable, Sendable, CustomStringConvertible {
        case unspecified = 0
        case low = 1
        case high = 2

        package var description: String {
            switch self {
            case .unspecified: "unspecified"
            case .low: "low"
            case .high: "high"
            }
        }
    }

    package struct AttenuationFilter: Hashable, Sendable {
        package var attenuation: Range
        package var dropIfMinutes: Range

        package init(attenuation: Range, dropIfMinutes: Range) {
            self.attenuation = attenuation
            self.dropIfMinutes = dropIfMinutes
        }
    }

    package struct AttenuationWeight: Hashable, Sendable {
        package var attenuation: Range
        package var weight: Double

        package init(attenuation: Range, weight: Double) {
            self.attenuation = attenuation
            self.weight = weight
        }
    }

    package struct TransmissionRiskValue: Hashable, Sendable {
        package var level: Int
        package var value: Double

        package init(level: Int, value: Double) {
            self.level = level
            self.value = value
        }
    }

    package struct RiskLevelMapping: Hashable, Sendable {
        package var normalizedTime: Range
        package var riskLevel: RiskLevel

        package init(normalizedTime: Range, riskLevel: RiskLevel) {
            self.normalizedTime = normalizedTime
            self.riskLevel = riskLevel
        }
    }

    /// `TransmissionRiskLevelEncoding`: a window's transmission risk level is its report type's
    /// offset plus its infectiousness's.
    package struct TRLEncoding: Hashable, Sendable {
        package var infectiousnessOffsetStandard = 0
        package var infectiousnessOffsetHigh = 0
        package var reportTypeOffsetRecursive = 0
        package var reportTypeOffsetSelfReport = 0
        package var reportTypeOffsetConfirmedClinicalDiagnosis = 0
        package var reportTypeOffsetConfirmedTest = 0

        package init() {}
    }

    package var minutesAtAttenuationFilters: [AttenuationFilter] = []
    package var trlFilters: [Range] = []
    package var minutesAtAttenuationWeights: [AttenuationWeight] = []
    package var normalizedTimePerWindowToRiskLevel: [RiskLevelMapping] = []
    package var normalizedTimePerDayToRiskLevel: [RiskLevelMapping] = []
    package var trlEncoding = TRLEncoding()
    /// `transmissionRiskValueMapping` in the order served: the first entry of a level counts.
    package var transmissionRiskValues: [TransmissionRiskValue] = []
    /// Windows of days older than this many days before today are dropped (`filterByAge`).
    package var maxEncounterAgeInDays = 14
    package var platform: Platform = .android

    package init() {}
}

/// What Corona-Warn-App's rule decided over a set of windows (its `EwAggregatedRiskResult`).
package struct CoronaWarnAppRiskResult: Hashable, Sendable {
    /// One day with a risk level (`ExposureWindowDayRisk`).
    package struct Day: Hashable, Sendable {
        package var day: UTCDay
        package var riskLevel: CoronaWarnAppRiskParameters.RiskLevel
        /// The day's normalized time (rounded to 0.1 under Android's rule).
        package var normalizedTime: Double
        package var minimumDistinctEncountersWithLowRisk: Int
        package var minimumDistinctEncountersWithHighRisk: Int
    }

    /// The days with a risk level, oldest first.
    package var days: [Day]
    /// High when any day is high, low otherwise (CWA's "total risk").
    package var totalRiskLevel: CoronaWarnAppRiskParameters.RiskLevel
    package var mostRecentDateWithLowRisk: UTCDay?
    package var mostRecentDateWithHighRisk: UTCDay?
    package var totalMinimumDistinctEncountersWithLowRisk: Int
    package var totalMinimumDistinctEncountersWithHighRisk: Int
    package var numberOfDaysWithLowRisk: Int
    package var numberOfDaysWithHighRisk: Int
    /// When the latest window that counted on a high-risk day began (`nil` without one, or when
    /// the windows carry no time).
    package var lastHighRiskExposure: UnixTime?

    /// The exposure days: the days of high risk, the ones Corona-Warn-App warns of.
    package var highRiskDays: [UTCDay] { days.filter { $0.riskLevel == .high }.map(\.day) }
}

/// Corona-Warn-App's calculation, step by step as its two apps number the steps.
package enum CoronaWarnAppRisk {
    /// One window's result (`RiskResult`); `nil` when a filter dropped it or no mapping gave it a
    /// level.
    struct WindowRisk {
        var transmissionRiskLevel: Int
        var normalizedTime: Double
        var riskLevel: CoronaWarnAppRiskParameters.RiskLevel
    }

    package static func evaluate(_ windows: [ExposureWindow], parameters: CoronaWarnAppRiskParameters, today: UTCDay) -> CoronaWarnAppRiskResult {
        let oldest = today.advanced(by: -Int64(parameters.maxEncounterAgeInDays))
        var byDay = [UTCDay: [(window: ExposureWindow, risk: WindowRisk)]]()
        for window in windows where window.day >= oldest {
            guard let risk = risk(of: window, parameters: parameters) else { continue }
            byDay[window.day, default: []].append((window, risk))
        }
        var days = [CoronaWarnAppRiskResult.Day]()
        var encountersLow = 0
        var encountersHigh = 0
        var lastHigh: UnixTime?
        for (day, windows) in byDay.sorted(by: { $0.key < $1.key }) {
            // 2. Normalized time per date: Android rounds the sum to one decimal (`roundToDecimal`,
            // half away from zero as Kotlin's roundToLong), iOS does not.
            var normalizedTime = windows.reduce(0) { $0 + $1.risk.normalizedTime }
            if parameters.platform == .android { normalizedTime = (normalizedTime * 10).rounded(.toNearestOrAwayFromZero) / 10 }
            let low = distinctEncounters(windows, level: .low)
            let high = distinctEncounters(windows, level: .high)
            // 3. Risk level per date: the first mapping whose range holds the time; none, no day.
            let level = parameters.normalizedTimePerDayToRiskLevel.first { $0.normalizedTime.contains(normalizedTime) }?.riskLevel
            if parameters.platform == .ios || level != nil {
                encountersLow += low
                encountersHigh += high
            }
            guard let level else { continue }
            days.append(
                CoronaWarnAppRiskResult.Day(
                    day: day, riskLevel: level, normalizedTime: normalizedTime, minimumDistinctEncountersWithLowRisk: low,
                    minimumDistinctEncountersWithHighRisk: high))
            if level == .high, let start = windows.compactMap(\.window.start).max() { lastHigh = max(lastHigh ?? start, start) }
        }
        let lowDays = days.filter { $0.riskLevel == .low }
        let highDays = days.filter { $0.riskLevel == .high }
        return CoronaWarnAppRiskResult(
            days: days, totalRiskLevel: highDays.isEmpty ? .low : .high, mostRecentDateWithLowRisk: lowDays.last?.day,
            mostRecentDateWithHighRisk: highDays.last?.day, totalMinimumDistinctEncountersWithLowRisk: encountersLow,
            totalMinimumDistinctEncountersWithHighRisk: encountersHigh, numberOfDaysWithLowRisk: lowDays.count,
            numberOfDaysWithHighRisk: highDays.count, lastHighRiskExposure: lastHigh)
    }

    /// Steps 1 to 7 for one window.
    static func risk(of window: ExposureWindow, parameters: CoronaWarnAppRiskParameters) -> WindowRisk? {
        // A negative time since the last scan counts as none, in both apps.
        let instances = window.scanInstances.map { (minimumAttenuation: Double($0.minimumAttenuation), seconds: max(0, $0.secondsSinceLastScan)) }
        // 1. Minutes at attenuation (by the minimum attenuation): Android divides as a fraction,
        // iOS in whole minutes.
        for filter in parameters.minutesAtAttenuationFilters {
            let seconds = instances.filter { filter.attenuation.contains($0.minimumAttenuation) }.reduce(0) { $0 + $1.seconds }
            let minutes = parameters.platform == .android ? Double(seconds) / 60 : Double(seconds / 60)
            if filter.dropIfMinutes.contains(minutes) { return nil }
        }
        // 2. Transmission risk level. A report type outside the four cannot reach here: gaend's
        // windows carry the configured type for keys without one, or the key is dropped.
        let encoding = parameters.trlEncoding
        let reportTypeOffset =
            switch window.reportType {
            case .confirmedTest: encoding.reportTypeOffsetConfirmedTest
            case .confirmedClinicalDiagnosis: encoding.reportTypeOffsetConfirmedClinicalDiagnosis
            case .selfReport: encoding.reportTypeOffsetSelfReport
            case .recursive: encoding.reportTypeOffsetRecursive
            default: 0
            }
        let infectiousnessOffset = window.infectiousness == .high ? encoding.infectiousnessOffsetHigh : encoding.infectiousnessOffsetStandard
        let level = reportTypeOffset + infectiousnessOffset
        // 3. Filter by transmission risk level.
        if parameters.trlFilters.contains(where: { $0.contains(Double(level)) }) { return nil }
        // 4. Transmission risk value: the first mapping of the level, 0 without one.
        let value = parameters.transmissionRiskValues.first { $0.level == level }?.value ?? 0
        // 5. Weighted minutes: each instance's seconds times the weight of the first range that
        // holds its minimum attenuation (0 without one).
        let weightedSeconds = instances.reduce(0.0) { sum, instance in
            sum + Double(instance.seconds)
                * (parameters.minutesAtAttenuationWeights.first { $0.attenuation.contains(instance.minimumAttenuation) }?.weight ?? 0)
        }
        // 6. Normalized time; 7. the window's level, or the window is dropped.
        let normalizedTime = value * (weightedSeconds / 60)
        guard let riskLevel = parameters.normalizedTimePerWindowToRiskLevel.first(where: { $0.normalizedTime.contains(normalizedTime) })?.riskLevel
        else { return nil }
        return WindowRisk(transmissionRiskLevel: level, normalizedTime: normalizedTime, riskLevel: riskLevel)
    }

    /// Steps 4 and 5: the distinct pairs of transmission risk level and calibration confidence
    /// among the day's windows of `level`.
    static func distinctEncounters(_ windows: [(window: ExposureWindow, risk: WindowRisk)], level: CoronaWarnAppRiskParameters.RiskLevel) -> Int {
        Set(windows.filter { $0.risk.riskLevel == level }.map { "\($0.risk.transmissionRiskLevel)_\($0.window.calibrationConfidence.rawValue)" }).count
    }
}
