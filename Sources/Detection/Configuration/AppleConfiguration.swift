// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

extension ExposureConfiguration {
    static let v2Keys: Set<String> = [
        "immediateDurationWeight", "nearDurationWeight", "mediumDurationWeight", "otherDurationWeight",
        "infectiousnessForDaysSinceOnsetOfSymptoms", "infectiousnessStandardWeight", "infectiousnessHighWeight",
        "reportTypeConfirmedTestWeight", "reportTypeConfirmedClinicalDiagnosisWeight", "reportTypeSelfReportedWeight",
        "reportTypeRecursiveWeight", "reportTypeNoneMap", "daysSinceLastExposureThreshold", "minimumWindowScore",
        "infectiousnessWhenDaysSinceOnsetMissing",
    ]
    static let v1Keys: Set<String> = [
        "minimumRiskScore", "attenuationWeight", "attenuationScores", "attenuationLevelValues", "daysSinceLastExposureWeight",
        "daysSinceLastExposureScores", "daysSinceLastExposureLevelValues", "durationWeight", "durationScores", "durationLevelValues",
        "transmissionRiskWeight", "transmissionRiskScores", "transmissionRiskLevelValues", "riskScoreFormula",
    ]
    static let perDayKeys: Set<String> = ["factorLow", "factorMedium", "triggerThreshold"]
    /// The verdict keys gaend's own dictionary adds: Koronavilkku's daily minimum.
    static let verdictKeys: Set<String> = ["minimumDailyScore"]

    /// Reads Apple's `ENExposureConfiguration` dictionary, as the sample apps write it (v1 and v2
    /// shapes, seeds/000 and seeds/004), with SwissCovid's per-day keys and `minimumDailyScore` as
    /// gaend's own additions for the verdict. `attenuationDurationThresholds` serves all three: 3
    /// values for v2, 2 for v1 and per-day (with 2, v2 has no medium bucket). Unknown keys are
    /// refused, so a typo cannot go unnoticed: this shape has no keys of an app's UI.
    init(apple object: [String: Any]) throws(ConfigurationError) {
        let reader = ConfigurationReader(object: object)
        let known = Self.v2Keys.union(Self.v1Keys).union(Self.perDayKeys).union(Self.verdictKeys).union(["attenuationDurationThresholds"])
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(key: unknown, problem: "not a configuration key")
        }
        let thresholds = try reader.thresholds("attenuationDurationThresholds")
        let hasV2 = object.keys.contains { Self.v2Keys.contains($0) }
        let hasV1 = object.keys.contains { Self.v1Keys.contains($0) }
        let hasPerDay = object.keys.contains { Self.perDayKeys.contains($0) }

        let hasVerdict = object.keys.contains { Self.verdictKeys.contains($0) }
        if hasPerDay && hasVerdict {
            throw ConfigurationError(key: "minimumDailyScore", problem: "one verdict rule per configuration: the per-day keys (factorLow...) are another")
        }
        var v2Configuration: V2Configuration?
        if hasV2 || (!hasV1 && !hasPerDay) {
            var v2 = V2Configuration()
            if let thresholds {
                guard thresholds.count == 3 || thresholds.count == 2 else {
                    throw ConfigurationError(key: "attenuationDurationThresholds", problem: "v2 takes 2 or 3 thresholds, got \(thresholds.count)")
                }
                v2.attenuationThresholds = thresholds.count == 3 ? thresholds : [thresholds[0], thresholds[1], thresholds[1]]
            }
            let names = ["immediateDurationWeight", "nearDurationWeight", "mediumDurationWeight", "otherDurationWeight"]
            for (index, name) in names.enumerated() {
                if let value = try reader.number(name, in: 0...250) { v2.bucketWeights[index] = value }
            }
            if let map = object["infectiousnessForDaysSinceOnsetOfSymptoms"] {
                // A map given is the whole map: the days it leaves out are none (Apple).
                v2.infectiousnessForDaysSinceOnset = [:]
                guard let entries = map as? [String: Any] else {
                    throw ConfigurationError(key: "infectiousnessForDaysSinceOnsetOfSymptoms", problem: "expected an object of day → 0, 1 or 2")
                }
                for (day, value) in entries {
                    let key = "infectiousnessForDaysSinceOnsetOfSymptoms[\"\(day)\"]"
                    guard let raw = value as? Int, let level = Infectiousness(rawValue: raw) else {
                        throw ConfigurationError(key: key, problem: "\(value) is not 0 (none), 1 (standard) or 2 (high)")
                    }
                    if day == "unknown" {
                        v2.infectiousnessWhenDaysSinceOnsetMissing = level
                    } else if let number = Int(day), (-14...14).contains(number) {
                        v2.infectiousnessForDaysSinceOnset[number] = level
                    } else {
                        throw ConfigurationError(key: key, problem: "days since onset must be -14...14 or \"unknown\"")
                    }
                }
            }
            if let raw = try reader.integer("infectiousnessWhenDaysSinceOnsetMissing", in: 0...2) {
                v2.infectiousnessWhenDaysSinceOnsetMissing = Infectiousness(rawValue: raw)!
            }
            if let value = try reader.number("infectiousnessStandardWeight", in: 0...250) { v2.infectiousnessStandardWeight = value }
            if let value = try reader.number("infectiousnessHighWeight", in: 0...250) { v2.infectiousnessHighWeight = value }
            let reportWeights: [(String, ReportTypeKey)] = [
                ("reportTypeConfirmedTestWeight", .confirmedTest), ("reportTypeConfirmedClinicalDiagnosisWeight", .confirmedClinicalDiagnosis),
                ("reportTypeSelfReportedWeight", .selfReport), ("reportTypeRecursiveWeight", .recursive),
            ]
            for (name, type) in reportWeights {
                if let value = try reader.number(name, in: 0...250) { v2.reportTypeWeights[type] = value }
            }
            if let raw = try reader.integer("reportTypeNoneMap", in: 0...4) {
                v2.reportTypeWhenMissing = raw == 0 ? nil : ReportTypeKey(rawValue: raw)
            }
            if let value = try reader.number("minimumWindowScore", in: 0...Double.greatestFiniteMagnitude) { v2.minimumWindowScore = value }
            if let value = try reader.integer("daysSinceLastExposureThreshold", in: 0...14) { v2.daysSinceLastExposureThreshold = value }
            v2Configuration = v2
        }

        var v1Configuration: V1Configuration?
        if hasV1 {
            var v1 = V1Configuration()
            if let value = try reader.integer("minimumRiskScore", in: 0...4096) { v1.minimumRiskScore = value }
            if let scores = try reader.scores("attenuationScores", alias: "attenuationLevelValues") { v1.attenuationScores = scores }
            if let scores = try reader.scores("daysSinceLastExposureScores", alias: "daysSinceLastExposureLevelValues") {
                v1.daysSinceLastExposureScores = scores
            }
            if let scores = try reader.scores("durationScores", alias: "durationLevelValues") { v1.durationScores = scores }
            if let scores = try reader.scores("transmissionRiskScores", alias: "transmissionRiskLevelValues") { v1.transmissionRiskScores = scores }
            if let value = try reader.number("attenuationWeight", in: 0...100) { v1.attenuationWeight = value }
            if let value = try reader.number("daysSinceLastExposureWeight", in: 0...100) { v1.daysSinceLastExposureWeight = value }
            if let value = try reader.number("durationWeight", in: 0...100) { v1.durationWeight = value }
            if let value = try reader.number("transmissionRiskWeight", in: 0...100) { v1.transmissionRiskWeight = value }
            if let text = object["riskScoreFormula"] {
                guard let name = text as? String, let formula = V1Configuration.Formula(rawValue: name) else {
                    throw ConfigurationError(key: "riskScoreFormula", problem: "\(text) is neither \"product\" nor \"weightedAverage\"")
                }
                v1.formula = formula
            }
            if let thresholds {
                guard thresholds.count == 2 else {
                    throw ConfigurationError(key: "attenuationDurationThresholds", problem: "v1 takes 2 thresholds, got \(thresholds.count)")
                }
                v1.attenuationDurationThresholds = thresholds
            }
            v1Configuration = v1
        }

        var rule: ExposureRule?
        if hasPerDay {
            var perDay = PerDayConfiguration()
            // Scored from v1 alone, the per-day minutes are capped as the v1 frameworks reported them.
            if v2Configuration == nil && v1Configuration != nil { perDay.minutesCap = 30 }
            if let thresholds {
                guard thresholds.count >= 2 else {
                    throw ConfigurationError(key: "attenuationDurationThresholds", problem: "the per-day check takes 2 thresholds, got \(thresholds.count)")
                }
                perDay.attenuationThresholds = Array(thresholds.prefix(2))
            }
            if let value = try reader.number("factorLow", in: 0...10) { perDay.factorLow = value }
            if let value = try reader.number("factorMedium", in: 0...10) { perDay.factorMedium = value }
            if let value = try reader.number("triggerThreshold", in: 0...1440) { perDay.triggerThreshold = value }
            rule = .perDayDuration(perDay)
        }
        if let minimum = try reader.number("minimumDailyScore", in: 0...Double.greatestFiniteMagnitude) {
            rule = .minimumDailyScore(minimum)
        }
        self.init(v2: v2Configuration, v1: v1Configuration, rule: rule, format: .apple)
    }
}
