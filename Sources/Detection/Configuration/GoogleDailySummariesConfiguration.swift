// SPDX-License-Identifier: GPL-3.0-or-later

/// Google's `DailySummariesConfig` and `DiagnosisKeysDataMapping` in JSON, with the Android API's
/// names and its 0…2.5 weights, exactly as Finland's Koronavilkku serves them
/// (THLfi/koronavilkku-backend README, `GET /exposure/configuration/v2`), and its
/// `minimumDailyScore` as the verdict. `version` and `availableCountries` are the app's.
enum GoogleDailySummariesShape {
    static let distinctiveKeys: Set<String> = [
        "attenuationBucketThresholdDb", "attenuationBucketWeights", "reportTypeWeightConfirmedTest", "daysSinceOnsetToInfectiousness",
        "infectiousnessWeightStandard", "minimumDailyScore",
    ]
    static let reportTypeWeights: [(String, ReportTypeKey)] = [
        ("reportTypeWeightConfirmedTest", .confirmedTest), ("reportTypeWeightConfirmedClinicalDiagnosis", .confirmedClinicalDiagnosis),
        ("reportTypeWeightSelfReport", .selfReport), ("reportTypeWeightRecursive", .recursive),
    ]
    static let knownKeys: Set<String> =
        distinctiveKeys.union(reportTypeWeights.map(\.0)).union([
            "infectiousnessWeightHigh", "daysSinceExposureThreshold", "minimumWindowScore", "infectiousnessWhenDaysSinceOnsetMissing",
            "reportTypeWhenMissing",
        ])
    /// Google's weights are fractions (0…2.5); gaend keeps Apple's percent.
    static let weightRange: ClosedRange<Double> = 0...2.5
}

extension ExposureConfiguration {
    init(googleDailySummaries object: [String: Any]) throws(ConfigurationError) {
        if let unknown = AuthorityShapeKeys.unknownScoringKey(in: object, known: GoogleDailySummariesShape.knownKeys) {
            throw ConfigurationError(key: unknown, problem: "not a key of Google's DailySummariesConfig or DiagnosisKeysDataMapping")
        }
        let reader = ConfigurationReader(object: object)
        let range = GoogleDailySummariesShape.weightRange
        var v2 = V2Configuration.googleBuilderDefaults
        // The builder's only required values (DailySummariesConfigBuilder.build).
        guard let thresholds = try reader.thresholds("attenuationBucketThresholdDb", counts: 3...3) else {
            throw ConfigurationError(key: "attenuationBucketThresholdDb", problem: "missing: Google's DailySummariesConfig requires the 3 bucket thresholds")
        }
        guard let weights = try reader.numbers("attenuationBucketWeights", counts: [4], in: range) else {
            throw ConfigurationError(key: "attenuationBucketWeights", problem: "missing: Google's DailySummariesConfig requires the 4 bucket weights")
        }
        v2.attenuationThresholds = thresholds
        v2.bucketWeights = weights.map { $0 * 100 }
        for (name, type) in GoogleDailySummariesShape.reportTypeWeights {
            if let value = try reader.number(name, in: range) { v2.reportTypeWeights[type] = value * 100 }
        }
        if let value = try reader.number("infectiousnessWeightStandard", in: range) { v2.infectiousnessStandardWeight = value * 100 }
        if let value = try reader.number("infectiousnessWeightHigh", in: range) { v2.infectiousnessHighWeight = value * 100 }
        if let value = try reader.integer("daysSinceExposureThreshold", in: 0...14) { v2.daysSinceLastExposureThreshold = value }
        if let value = try reader.number("minimumWindowScore", in: 0...Double.greatestFiniteMagnitude) { v2.minimumWindowScore = value }
        if let map = try reader.object("daysSinceOnsetToInfectiousness") {
            // A map given is the whole map, as the API's setDaysSinceOnsetToInfectiousness.
            v2.infectiousnessForDaysSinceOnset = [:]
            for (day, value) in map {
                let key = "daysSinceOnsetToInfectiousness[\"\(day)\"]"
                guard let number = Int(day), (-14...14).contains(number) else {
                    throw ConfigurationError(key: key, problem: "days since onset must be -14...14")
                }
                guard let level = AuthorityShapeKeys.infectiousness(value) else {
                    throw ConfigurationError(key: key, problem: "\(value) is not NONE, STANDARD or HIGH")
                }
                v2.infectiousnessForDaysSinceOnset[number] = level
            }
        }
        if let value = object["infectiousnessWhenDaysSinceOnsetMissing"] {
            guard let level = AuthorityShapeKeys.infectiousness(value) else {
                throw ConfigurationError(key: "infectiousnessWhenDaysSinceOnsetMissing", problem: "\(value) is not NONE, STANDARD or HIGH")
            }
            v2.infectiousnessWhenDaysSinceOnsetMissing = level
        }
        if let raw = try reader.integer("reportTypeWhenMissing", in: 0...4) {
            v2.reportTypeWhenMissing = raw == 0 ? nil : ReportTypeKey(rawValue: raw)
        }
        // Koronavilkku's app compares the day's scoreSum, rounded, with it (ExposureUpdateWorker).
        let rule = try reader.number("minimumDailyScore", in: 0...Double.greatestFiniteMagnitude).map(ExposureRule.minimumDailyScore)
        self.init(v2: v2, rule: rule ?? .scoreAboveZero, format: .googleDailySummaries)
    }
}
