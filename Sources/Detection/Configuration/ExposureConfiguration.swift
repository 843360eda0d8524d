// SPDX-License-Identifier: GPL-3.0-or-later

/// Infectiousness of a key's holder on a day, from days since onset of symptoms (Apple's
/// `ENInfectiousness`).
public enum Infectiousness: Int, Hashable, Sendable, CustomStringConvertible {
    case none = 0
    case standard = 1
    case high = 2

    public var description: String {
        switch self {
        case .none: return "none"
        case .standard: return "standard"
        case .high: return "high"
        }
    }
}

/// The v2 ("exposure windows") scoring configuration, in Apple's shape: weights in percent, 0…250.
public struct V2Configuration: Hashable, Sendable {
    /// Bucket edges for typical attenuation, dB: immediate ≤ [0], near ≤ [1], medium ≤ [2], else other.
    public var attenuationThresholds: [Int] = [50, 70, 90]
    /// Percent weights of the immediate, near, medium and other buckets.
    public var bucketWeights: [Double] = [100, 100, 100, 100]
    /// Days since onset −14…14 → infectiousness; days not listed are `.none`.
    public var infectiousnessForDaysSinceOnset: [Int: Infectiousness] = [:]
    /// Used when a key has no days since onset, or |days| > 14.
    public var infectiousnessWhenDaysSinceOnsetMissing: Infectiousness = .standard
    public var infectiousnessStandardWeight: Double = 100
    public var infectiousnessHighWeight: Double = 100
    public var reportTypeWeights: [ReportTypeKey: Double] = [.confirmedTest: 100, .confirmedClinicalDiagnosis: 100, .selfReport: 100, .recursive: 100]
    /// What a key without a report type counts as (Apple's `reportTypeNoneMap`); `nil` drops them.
    public var reportTypeWhenMissing: ReportTypeKey? = .confirmedTest
    /// Windows scoring below this are dropped (Google's `minimumWindowScore`).
    public var minimumWindowScore: Double = 0
    /// Windows more than this many days old are dropped; 0 keeps all.
    public var daysSinceLastExposureThreshold: Int = 0

    public init() {}
}

/// The report types scoring weighs (UNKNOWN and REVOKED are never weighed).
public enum ReportTypeKey: Int, Hashable, Sendable, CaseIterable {
    case confirmedTest = 1
    case confirmedClinicalDiagnosis = 2
    case selfReport = 3
    case recursive = 4
}

/// The v1 configuration: 8 scores per parameter, weights 0…100 (used only by the weighted-average
/// formula), a minimum risk score, and the two attenuation-duration thresholds.
public struct V1Configuration: Hashable, Sendable {
    public var minimumRiskScore: Int = 0
    public var attenuationScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    public var daysSinceLastExposureScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    public var durationScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    public var transmissionRiskScores: [Int] = [1, 2, 3, 4, 5, 6, 7, 8]
    public var attenuationWeight: Double = 50
    public var daysSinceLastExposureWeight: Double = 50
    public var durationWeight: Double = 50
    public var transmissionRiskWeight: Double = 50
    /// Low and high edges of the attenuation durations: < low, low ≤ a < high, ≥ high (Google's).
    public var attenuationDurationThresholds: [Int] = [50, 74]
    public var formula: Formula = .product

    public enum Formula: String, Hashable, Sendable {
        /// The shipped frameworks: the product of the four scores, 0…4096.
        case product
        /// The preliminary v1.2 document: the weighted average of the four scores.
        case weightedAverage
    }

    public init() {}
}

/// SwissCovid's per-day check: minutes per day below the first threshold (low) and between the two
/// (medium); `low × factorLow + medium × factorMedium ≥ triggerThreshold` flags the day.
public struct PerDayConfiguration: Hashable, Sendable {
    public var attenuationThresholds: [Int] = [55, 63]
    public var factorLow: Double = 1
    public var factorMedium: Double = 0.5
    /// Minutes.
    public var triggerThreshold: Double = 15

    public init() {}
}

/// A health authority's configuration: any of the three forms, as one JSON object may carry them.
public struct ExposureConfiguration: Hashable, Sendable {
    public var v2: V2Configuration?
    public var v1: V1Configuration?
    public var perDay: PerDayConfiguration?

    public init(v2: V2Configuration? = nil, v1: V1Configuration? = nil, perDay: PerDayConfiguration? = nil) {
        self.v2 = v2
        self.v1 = v1
        self.perDay = perDay
    }

    /// v2 when it has v2 keys (or nothing else), v1 otherwise: decides the detection budget.
    public var isV1Only: Bool { v2 == nil && v1 != nil }
}
