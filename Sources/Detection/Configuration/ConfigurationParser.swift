// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation

/// A configuration value that is wrong, named by its key.
package struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    package var key: String
    package var problem: String

    package init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    package var description: String { key.isEmpty ? problem : "\(key): \(problem)" }
}

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

    /// Reads the JSON object of the sample apps (v1 and v2 shapes) and SwissCovid's per-day keys.
    /// `attenuationDurationThresholds` serves all three: 3 values for v2, 2 for v1 and per-day (with
    /// 2, v2 has no medium bucket). Unknown keys are refused, so a typo cannot go unnoticed.
    package init(json data: Data) throws(ConfigurationError) {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(key: "", problem: "not JSON (\(error.localizedDescription))")
        }
        guard let object = root as? [String: Any] else { throw ConfigurationError(key: "", problem: "not a JSON object") }
        let reader = Reader(object: object)
        let known = Self.v2Keys.union(Self.v1Keys).union(Self.perDayKeys).union(["attenuationDurationThresholds"])
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(key: unknown, problem: "not a configuration key")
        }
        let thresholds = try reader.thresholds("attenuationDurationThresholds")
        let hasV2 = object.keys.contains { Self.v2Keys.contains($0) }
        let hasV1 = object.keys.contains { Self.v1Keys.contains($0) }
        let hasPerDay = object.keys.contains { Self.perDayKeys.contains($0) }

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
            self.v2 = v2
        } else {
            v2 = nil
        }

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
            self.v1 = v1
        } else {
            v1 = nil
        }

        if hasPerDay {
            var perDay = PerDayConfiguration()
            if let thresholds {
                guard thresholds.count >= 2 else {
                    throw ConfigurationError(key: "attenuationDurationThresholds", problem: "the per-day check takes 2 thresholds, got \(thresholds.count)")
                }
                perDay.attenuationThresholds = Array(thresholds.prefix(2))
            }
            if let value = try reader.number("factorLow", in: 0...10) { perDay.factorLow = value }
            if let value = try reader.number("factorMedium", in: 0...10) { perDay.factorMedium = value }
            if let value = try reader.number("triggerThreshold", in: 0...1440) { perDay.triggerThreshold = value }
            self.perDay = perDay
        } else {
            perDay = nil
        }
    }

    /// Typed access to the object's values, each failure naming its key.
    private struct Reader {
        let object: [String: Any]

        func number(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
            guard let raw = object[key] else { return nil }
            guard !Self.isBoolean(raw), let value = (raw as? NSNumber).map({ $0.doubleValue }), value.isFinite, range.contains(value) else {
                throw ConfigurationError(key: key, problem: "\(raw) is not a number in \(Self.text(range.lowerBound))...\(Self.text(range.upperBound))")
            }
            return value
        }

        func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
            guard let raw = object[key] else { return nil }
            guard !Self.isBoolean(raw), let number = raw as? NSNumber, Double(number.intValue) == number.doubleValue,
                case let value = number.intValue, range.contains(value)
            else {
                throw ConfigurationError(key: key, problem: "\(raw) is not an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }

        func scores(_ key: String, alias: String) throws(ConfigurationError) -> [Int]? {
            guard let name = object[key] != nil ? key : (object[alias] != nil ? alias : nil) else { return nil }
            // `as? Int` bridges only an integer Int holds; NSNumber.intValue would take 2^64 + 1 for
            // 1 and 1.5 for 1.
            guard let values = object[name] as? [Any], values.count == 8,
                case let numbers = values.compactMap({ Self.isBoolean($0) ? nil : $0 as? Int }), numbers.count == 8
            else {
                throw ConfigurationError(key: name, problem: "expected 8 integers")
            }
            guard numbers.allSatisfy({ (0...8).contains($0) }) else {
                throw ConfigurationError(key: name, problem: "every score must be 0...8")
            }
            return numbers
        }

        func thresholds(_ key: String) throws(ConfigurationError) -> [Int]? {
            guard let raw = object[key] else { return nil }
            guard let values = raw as? [Int], (1...3).contains(values.count) else {
                throw ConfigurationError(key: key, problem: "expected 2 or 3 integers")
            }
            guard values.allSatisfy({ (0...255).contains($0) }), zip(values, values.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw ConfigurationError(key: key, problem: "\(values) must be strictly increasing dB values in 0...255")
            }
            return values
        }

        /// JSON `true`/`false`: Foundation on Linux gives them as a boolean subclass of NSNumber, which
        /// `as? Int` would also accept, so `true` would pass for 1.
        static func isBoolean(_ value: Any) -> Bool {
            value is NSNumber && ObjectIdentifier(type(of: value)) != ObjectIdentifier(NSNumber.self)
        }

        static func text(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
        }
    }
}
