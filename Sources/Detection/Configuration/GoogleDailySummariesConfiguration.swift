// SPDX-License-Identifier: GPL-3.0-or-later

/// Google's `DailySummariesConfig` and `DiagnosisKeysDataMapping` in JSON, with the Android API's
/// names and its 0…2.5 weights: flat, exactly as Finland's Koronavilkku serves them
/// (THLfi/koronavilkku-backend README, `GET /exposure/configuration/v2`, its `minimumDailyScore` the
/// verdict; `version` and `availableCountries` are the app's), or as the two messages
/// Corona-Warn-App's Android configuration carries (`dailySummariesConfig` and
/// `diagnosisKeysDataMapping` of cwa-app-android's `app_config_android.proto` in proto3 JSON, weights
/// and the days map keyed by the API's numbers).
enum GoogleDailySummariesShape {
    static let distinctiveKeys: Set<String> = [
        "attenuationBucketThresholdDb", "attenuationBucketWeights", "reportTypeWeightConfirmedTest", "daysSinceOnsetToInfectiousness",
        "infectiousnessWeightStandard", "dailySummariesConfig", "diagnosisKeysDataMapping",
    ]
    /// The two messages, when a configuration carries them apart.
    static let messages = ["dailySummariesConfig", "diagnosisKeysDataMapping"]
    static let reportTypeWeights: [(String, ReportTypeKey)] = [
        ("reportTypeWeightConfirmedTest", .confirmedTest), ("reportTypeWeightConfirmedClinicalDiagnosis", .confirmedClinicalDiagnosis),
        ("reportTypeWeightSelfReport", .selfReport), ("reportTypeWeightRecursive", .recursive),
    ]
    static let knownKeys: Set<String> =
        distinctiveKeys.union(reportTypeWeights.map(\.0)).union([
            "infectiousnessWeightHigh", "daysSinceExposureThreshold", "minimumWindowScore", "infectiousnessWhenDaysSinceOnsetMissing",
            "reportTypeWhenMissing", "minimumDailyScore", "reportTypeWeights", "infectiousnessWeights",
        ])
    /// Google's weights are fractions (0…2.5); gaend keeps Apple's percent.
    static let weightRange: ClosedRange<Double> = 0...2.5
}

extension ExposureConfiguration {
    init(googleDailySummaries root: [String: Any]) throws(ConfigurationError) {
        var object = root
        if GoogleDailySummariesShape.messages.contains(where: { root[$0] != nil }) {
            // The two messages merged into one object; the rest of the configuration is the app's.
            object = [:]
            for message in GoogleDailySummariesShape.messages {
                guard let members = try ConfigurationReader(object: root).object(message) else { continue }
                object.merge(members) { first, _ in first }
            }
        }
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
        // The proto3 maps: report type 1…4 and infectiousness 1…2 (the API's numbers) → weight.
        for (number, weight) in try Self.weightMap(reader, "reportTypeWeights", keys: 1...4) {
            v2.reportTypeWeights[ReportTypeKey(rawValue: number)!] = weight * 100
        }
        for (number, weight) in try Self.weightMap(reader, "infectiousnessWeights", keys: 1...2) {
            if number == Infectiousness.standard.rawValue { v2.infectiousnessStandardWeight = weight * 100 } else { v2.infectiousnessHighWeight = weight * 100 }
        }
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

    /// A proto3 map of the API's numbers (as JSON's string keys) to weights in 0…2.5.
    private static func weightMap(_ reader: ConfigurationReader, _ key: String, keys: ClosedRange<Int>) throws(ConfigurationError) -> [(Int, Double)] {
        guard let map = try reader.object(key) else { return [] }
        var weights = [(Int, Double)]()
        for (name, value) in map.sorted(by: { $0.key < $1.key }) {
            let entry = "\(key)[\"\(name)\"]"
            guard let number = Int(name), keys.contains(number) else {
                throw ConfigurationError(key: entry, problem: "not one of the API's numbers \(keys.lowerBound)...\(keys.upperBound)")
            }
            guard let weight = try ConfigurationReader(object: [entry: value]).number(entry, in: GoogleDailySummariesShape.weightRange) else { continue }
            weights.append((number, weight))
        }
        return weights
    }
}
