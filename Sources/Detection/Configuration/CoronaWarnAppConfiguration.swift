// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Corona-Warn-App's application configuration in proto3 JSON: `ApplicationConfigurationAndroid`
/// (cwa-app-android `app_config_android.proto`) or `ApplicationConfigurationIOS`
/// (`app_config_ios.proto`). Its rule is `riskCalculationParameters`
/// (`risk_calculation_parameters.proto`), read whole and strictly: every key of it is known, or
/// the configuration is refused naming the key. The windows it judges are made with the Android
/// configuration's `diagnosisKeysDataMapping` (and `dailySummariesConfig`, which CWA handed to
/// the framework for daily summaries but never judged by), or the iOS one's
/// `exposureConfiguration`. The rest (features, test parameters, presence tracing) is the app's.
enum CoronaWarnAppShape {
    static let rulesKey = "riskCalculationParameters"
    static let distinctiveKeys: Set<String> = [rulesKey]
}

extension ExposureConfiguration {
    init(coronaWarnApp root: [String: Any]) throws(ConfigurationError) {
        let key = CoronaWarnAppShape.rulesKey
        guard let rules = root[key] as? [String: Any] else { throw ConfigurationError(key: key, problem: "expected a JSON object") }
        var parameters = try CoronaWarnAppRules(rules, path: key).parameters()
        let v2: V2Configuration?
        if let ios = root["exposureConfiguration"] {
            guard let object = ios as? [String: Any] else { throw ConfigurationError(key: "exposureConfiguration", problem: "expected a JSON object") }
            parameters.platform = .ios
            v2 = try ExposureConfiguration(apple: object).v2
        } else if root["diagnosisKeysDataMapping"] != nil {
            parameters.platform = .android
            var messages = [String: Any]()
            for message in GoogleDailySummariesShape.messages { messages[message] = root[message] }
            v2 = try ExposureConfiguration(googleDailySummaries: messages).v2
        } else {
            throw ConfigurationError(
                key: key,
                problem:
                    "served without diagnosisKeysDataMapping (Android) or exposureConfiguration (iOS), which give each window its infectiousness and report type"
            )
        }
        self.init(v2: v2, rule: .coronaWarnApp(parameters), format: .coronaWarnApp)
    }
}

/// Reads `riskCalculationParameters`, each failure naming its path.
struct CoronaWarnAppRules {
    let object: [String: Any]
    let path: String

    init(_ object: [String: Any], path: String) {
        self.object = object
        self.path = path
    }

    func parameters() throws(ConfigurationError) -> CoronaWarnAppRiskParameters {
        try known([
            "minutesAtAttenuationFilters", "trlFilters", "minutesAtAttenuationWeights", "normalizedTimePerEWToRiskLevelMapping",
            "normalizedTimePerDayToRiskLevelMapping", "trlEncoding", "transmissionRiskLevelMultiplier", "transmissionRiskValueMapping",
            "maxEncounterAgeInDays",
        ])
        var parameters = CoronaWarnAppRiskParameters()
        parameters.minutesAtAttenuationFilters = try list("minutesAtAttenuationFilters") { item throws(ConfigurationError) in
            try item.known(["attenuationRange", "dropIfMinutesInRange"])
            return .init(attenuation: try item.range("attenuationRange"), dropIfMinutes: try item.range("dropIfMinutesInRange"))
        }
        parameters.trlFilters = try list("trlFilters") { item throws(ConfigurationError) in
            try item.known(["dropIfTrlInRange"])
            return try item.range("dropIfTrlInRange")
        }
        parameters.minutesAtAttenuationWeights = try list("minutesAtAttenuationWeights") { item throws(ConfigurationError) in
            try item.known(["attenuationRange", "weight"])
            return .init(attenuation: try item.range("attenuationRange"), weight: try item.number("weight") ?? 0)
        }
        parameters.normalizedTimePerWindowToRiskLevel = try list("normalizedTimePerEWToRiskLevelMapping") { item throws(ConfigurationError) in
            try item.mapping()
        }
        parameters.normalizedTimePerDayToRiskLevel = try list("normalizedTimePerDayToRiskLevelMapping") { item throws(ConfigurationError) in
            try item.mapping()
        }
        guard !parameters.normalizedTimePerDayToRiskLevel.isEmpty else {
            throw ConfigurationError(key: "\(path).normalizedTimePerDayToRiskLevelMapping", problem: "missing: without it no day has a risk level")
        }
        if let encoding = try child("trlEncoding") {
            try encoding.known([
                "infectiousnessOffsetStandard", "infectiousnessOffsetHigh", "reportTypeOffsetRecursive", "reportTypeOffsetSelfReport",
                "reportTypeOffsetConfirmedClinicalDiagnosis", "reportTypeOffsetConfirmedTest",
            ])
            var trl = CoronaWarnAppRiskParameters.TRLEncoding()
            trl.infectiousnessOffsetStandard = try encoding.integer("infectiousnessOffsetStandard") ?? 0
            trl.infectiousnessOffsetHigh = try encoding.integer("infectiousnessOffsetHigh") ?? 0
            trl.reportTypeOffsetRecursive = try encoding.integer("reportTypeOffsetRecursive") ?? 0
            trl.reportTypeOffsetSelfReport = try encoding.integer("reportTypeOffsetSelfReport") ?? 0
            trl.reportTypeOffsetConfirmedClinicalDiagnosis = try encoding.integer("reportTypeOffsetConfirmedClinicalDiagnosis") ?? 0
            trl.reportTypeOffsetConfirmedTest = try encoding.integer("reportTypeOffsetConfirmedTest") ?? 0
            parameters.trlEncoding = trl
        }
        // Deprecated in the proto and read by neither app since the value mapping came: known, not used.
        _ = try number("transmissionRiskLevelMultiplier")
        parameters.transmissionRiskValues = try list("transmissionRiskValueMapping") { item throws(ConfigurationError) in
            try item.known(["transmissionRiskLevel", "transmissionRiskValue"])
            return .init(level: try item.integer("transmissionRiskLevel") ?? 0, value: try item.number("transmissionRiskValue") ?? 0)
        }
        // proto3 leaves a 0 out, and 0 keeps today's windows alone: a configuration without it is
        // refused rather than read as 0 (cwa-server serves 14).
        guard let age = try integer("maxEncounterAgeInDays", in: 0...3650) else {
            throw ConfigurationError(key: "\(path).maxEncounterAgeInDays", problem: "missing: Corona-Warn-App drops every window older than it")
        }
        parameters.maxEncounterAgeInDays = age
        return parameters
    }

    // MARK: - Typed reads, proto3 JSON

    func known(_ keys: Set<String>) throws(ConfigurationError) {
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ConfigurationError(key: "\(path).\(unknown)", problem: "not a key of Corona-Warn-App's \(Self.messageName(path))")
        }
    }

    static func messageName(_ path: String) -> String {
        let last = path.split(separator: ".").last.map(String.init) ?? path
        return String(last.prefix { $0 != "[" })
    }

    func child(_ key: String) throws(ConfigurationError) -> CoronaWarnAppRules? {
        guard let raw = object[key] else { return nil }
        guard let value = raw as? [String: Any] else { throw ConfigurationError(key: "\(path).\(key)", problem: "expected a JSON object") }
        return CoronaWarnAppRules(value, path: "\(path).\(key)")
    }

    func list<T>(_ key: String, _ read: (CoronaWarnAppRules) throws(ConfigurationError) -> T) throws(ConfigurationError) -> [T] {
        guard let raw = object[key] else { return [] }
        guard let items = raw as? [Any] else { throw ConfigurationError(key: "\(path).\(key)", problem: "expected a JSON array") }
        var values = [T]()
        for (index, item) in items.enumerated() {
            let itemPath = "\(path).\(key)[\(index)]"
            guard let object = item as? [String: Any] else { throw ConfigurationError(key: itemPath, problem: "expected a JSON object") }
            values.append(try read(CoronaWarnAppRules(object, path: itemPath)))
        }
        return values
    }

    func number(_ key: String) throws(ConfigurationError) -> Double? {
        guard let raw = object[key] else { return nil }
        guard !ConfigurationReader.isBoolean(raw), let value = (raw as? NSNumber)?.doubleValue, value.isFinite else {
            throw ConfigurationError(key: "\(path).\(key)", problem: "\(raw) is not a number")
        }
        return value
    }

    func integer(_ key: String, in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)) throws(ConfigurationError) -> Int? {
        guard let raw = object[key] else { return nil }
        guard let value = ConfigurationReader.integer(raw), range.contains(value) else {
            throw ConfigurationError(key: "\(path).\(key)", problem: "\(raw) is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func boolean(_ key: String) throws(ConfigurationError) -> Bool {
        guard let raw = object[key] else { return false }
        guard ConfigurationReader.isBoolean(raw), let value = (raw as? NSNumber)?.boolValue else {
            throw ConfigurationError(key: "\(path).\(key)", problem: "\(raw) is not true or false")
        }
        return value
    }

    /// A `Range`; a field left out is proto3's default (0, false).
    func range(_ key: String) throws(ConfigurationError) -> CoronaWarnAppRiskParameters.Range {
        guard let range = try child(key) else { throw ConfigurationError(key: "\(path).\(key)", problem: "missing") }
        try range.known(["min", "max", "minExclusive", "maxExclusive"])
        return CoronaWarnAppRiskParameters.Range(
            min: try range.number("min") ?? 0, max: try range.number("max") ?? 0, minExclusive: try range.boolean("minExclusive"),
            maxExclusive: try range.boolean("maxExclusive"))
    }

    /// A `NormalizedTimeToRiskLevelMapping`: its level by the enum's name or number.
    func mapping() throws(ConfigurationError) -> CoronaWarnAppRiskParameters.RiskLevelMapping {
        try known(["normalizedTimeRange", "riskLevel"])
        let raw = object["riskLevel"] ?? 0
        let names: [String: CoronaWarnAppRiskParameters.RiskLevel] = ["UNSPECIFIED": .unspecified, "LOW": .low, "HIGH": .high]
        guard let level = (raw as? String).flatMap({ names[$0] }) ?? ConfigurationReader.integer(raw).flatMap(CoronaWarnAppRiskParameters.RiskLevel.init)
        else {
            throw ConfigurationError(key: "\(path).riskLevel", problem: "\(raw) is not UNSPECIFIED, LOW or HIGH (0, 1 or 2)")
        }
        return .init(normalizedTime: try range("normalizedTimeRange"), riskLevel: level)
    }
}
