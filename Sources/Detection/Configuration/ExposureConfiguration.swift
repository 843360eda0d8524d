// SPDX-License-Identifier: GPL-3.0-or-later

/// Infectiousness of a key's holder on a day, from days since onset of symptoms (Apple's
/// `ENInfectiousness`).
package enum Infectiousness: Int, Hashable, Sendable, CustomStringConvertible {
    case none = 0
    case standard = 1
    case high = 2

    package var description: String {
        switch self {
        case .none: return "none"
        case .standard: return "standard"
        case .high: return "high"
        }
    }
}

/// The v2 ("exposure windows") scoring configuration, in Apple's shape: weights in percent, 0…250.
package struct V2Configuration: Hashable, Sendable {
    /// Bucket edges for typical attenuation, dB: immediate ≤ [0], near ≤ [1], medium ≤ [2], else other.
    package var attenuationThresholds: [Int] = [50, 70, 90]
    /// Percent weights of the immediate, near, medium and other buckets.
    package var bucketWeights: [Double] = [100, 100, 100, 100]
    /// Days since onset −14…14 → infectiousness; days not listed are `.none`. Without a map, every
    /// day is standard, as GMS when an app never set a `DiagnosisKeysDataMapping`.
    package var infectiousnessForDaysSinceOnset: [Int: Infectiousness] = V2Configuration.everyDayStandard
    package static let everyDayStandard = Dictionary(uniqueKeysWithValues: (-14...14).map { ($0, Infectiousness.standard) })
    /// Used when a key has no days since onset, or |days| > 14.
    package var infectiousnessWhenDaysSinceOnsetMissing: Infectiousness = .standard
    package var infectiousnessStandardWeight: Double = 100
    package var infectiousnessHighWeight: Double = 100
    package var reportTypeWeights: [ReportTypeKey: Double] = [.confirmedTest: 100, .confirmedClinicalDiagnosis: 100, .selfReport: 100, .recursive: 100]
    /// What a key without a report type counts as (Apple's `reportTypeNoneMap`); `nil` drops them.
    package var reportTypeWhenMissing: ReportTypeKey? = .confirmedTest
    /// Windows scoring below this are dropped (Google's `minimumWindowScore`).
    package var minimumWindowScore: Double = 0
    /// Windows more than this many days old are dropped; 0 keeps all.
    package var daysSinceLastExposureThreshold: Int = 0

    package init() {}

    /// What Google's `DailySummariesConfigBuilder` holds before an app sets anything: every report
    /// type and infectiousness weight 0 (gaen-spec.md; the Play Services code in
    /// exposure-notifications-internals), so a weight a configuration leaves out scores nothing.
    /// The days-since-onset mapping keeps GMS's own default (all days standard).
    package static var googleBuilderDefaults: V2Configuration {
        var configuration = V2Configuration()
        configuration.reportTypeWeights = Dictionary(uniqueKeysWithValues: ReportTypeKey.allCases.map { ($0, 0) })
        configuration.infectiousnessStandardWeight = 0
        configuration.infectiousnessHighWeight = 0
        return configuration
    }
}

/// The report types scoring weighs (UNKNOWN and REVOKED are never weighed).
package enum ReportTypeKey: Int, Hashable, Sendable, CaseIterable {
    case confirmedTest = 1
    case confirmedClinicalDiagnosis = 2
    case selfReport = 3
    case recursive = 4
}

/// The v1 configuration: 8 scores per parameter, weights 0…100 (used only by the weighted-average
/// formula), a minimum risk score, and the two attenuation-duration thresholds.
package struct V1Configuration: Hashable, Sendable {
    package var minimumRiskScore: Int = 0
    package var attenuationScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    package var daysSinceLastExposureScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    package var durationScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    package var transmissionRiskScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    package var attenuationWeight: Double = 50
    package var daysSinceLastExposureWeight: Double = 50
    package var durationWeight: Double = 50
    package var transmissionRiskWeight: Double = 50
    /// Low and high edges of the attenuation durations: < low, low ≤ a < high, ≥ high (Google's).
    package var attenuationDurationThresholds: [Int] = [50, 74]
    package var formula: Formula = .product

    package enum Formula: String, Hashable, Sendable {
        /// The shipped frameworks: the product of the four scores, 0…4096.
        case product
        /// The preliminary v1.2 document: the weighted average of the four scores.
        case weightedAverage
    }

    package init() {}
}

/// SwissCovid's per-day check: minutes per day below the first threshold (low) and between the two
/// (medium); `low × factorLow + medium × factorMedium ≥ triggerThreshold` flags the day.
package struct PerDayConfiguration: Hashable, Sendable {
    package var attenuationThresholds: [Int] = [55, 63]
    package var factorLow: Double = 1
    package var factorMedium: Double = 0.5
    /// Minutes.
    package var triggerThreshold: Double = 15
    /// UTC days, today included, in which a day is judged (DP-3T's `notificationGenerationTimeSpan`).
    package var daysConsidered: Int = 10
    /// Minutes each bucket is capped at: `nil` for windows (DP-3T v2), 30 where a v1 configuration is
    /// scored (the v1 frameworks capped each attenuation duration at 30 minutes).
    package var minutesCap: Double?

    package init() {}
}

/// A health authority's configuration: the weights (v2, v1 or both, as one JSON object may carry
/// them), the rule that turns scores into exposure days, and the shape it was read from.
package struct ExposureConfiguration: Hashable, Sendable {
    package var v2: V2Configuration?
    package var v1: V1Configuration?
    package var rule: ExposureRule
    package var format: ConfigurationFormat

    package init(v2: V2Configuration? = nil, v1: V1Configuration? = nil, rule: ExposureRule? = nil, format: ConfigurationFormat = .apple) {
        self.v2 = v2
        self.v1 = v1
        self.rule = rule ?? (v2 == nil && v1 != nil ? .v1RiskScore : .scoreAboveZero)
        self.format = format
    }

    /// The per-day check's settings, when it is the rule.
    package var perDay: PerDayConfiguration? {
        if case .perDayDuration(let configuration) = rule { return configuration }
        return nil
    }

    /// gaend's configuration when none is configured (the daemon without `exposure-configuration`,
    /// `gaenctl tools replay` without `--config`): v2 with the framework's defaults, every day from
    /// 14 before to 14 after symptom onset standard, a day an exposure when it scores above 0.
    package static var builtIn: ExposureConfiguration { ExposureConfiguration(v2: V2Configuration()) }

    /// v2 when it has v2 keys (or nothing else), v1 otherwise: decides the detection budget.
    package var isV1Only: Bool { v2 == nil && v1 != nil }
}
