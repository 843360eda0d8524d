// SPDX-License-Identifier: GPL-3.0-or-later

/// The Exposure Notifications Express configuration (google/exposure-notifications-android
/// `app/configs/sample.json`): one object under `"config"`, read as ENX's build turns it into the
/// framework's `DailySummariesConfig` and `DiagnosisKeysDataMapping`
/// (`riskcalculation/RiskCalculationModule.java`, weights in percent) and its four classifications
/// (`riskcalculation/ClassificationThreshold.java`). Texts, URLs, colours and app settings are passed
/// over.
enum ENXShape {
    static let bucketWeights = ["attenuationImmediateWeight", "attenuationNearWeight", "attenuationMedWeight", "attenuationOtherWeight"]
    static let bucketThresholds = ["attenuationImmediateNearThreshold", "attenuationNearMedThreshold", "attenuationMedFarThreshold"]
    static let reportTypeWeights: [(String, ReportTypeKey)] = [
        ("reportTypeConfirmedTestWeight", .confirmedTest), ("reportTypeConfirmedClinicalDiagnosisWeight", .confirmedClinicalDiagnosis),
        ("reportTypeSelfReportWeight", .selfReport),
    ]
    static let classificationReportTypes: [(String, ReportTypeKey)] = [
        ("confirmedTestPerDaySumERVThreshold", .confirmedTest), ("clinicalDiagnosisPerDaySumERVThreshold", .confirmedClinicalDiagnosis),
        ("selfReportPerDaySumERVThreshold", .selfReport), ("recursivePerDaySumERVThreshold", .recursive),
    ]
    static let classificationTotals = ["perDaySumERVThreshold", "perDayMaxERVThreshold", "weightedDurationAtAttenuationThreshold"]
    /// ENX has exactly four classifications (`ClassificationThreshold`, indices 1…4).
    static let classificationIndices = 1...4

    static var knownKeys: Set<String> {
        var keys = Set(bucketWeights + bucketThresholds + reportTypeWeights.map(\.0))
        keys.formUnion([
            "infectiousnessStandardWeight", "infectiousnessHighWeight", "symptomOnsetToInfectiousnessMap", "reportTypeNoneMap",
            "daysSinceExposureThreshold",
        ])
        for index in classificationIndices {
            keys.insert("classificationName_\(index)")
            for name in classificationReportTypes.map(\.0) + classificationTotals { keys.insert("\(name)_\(index)") }
        }
        return keys
    }

    /// ENX's hex map (`DiagnosisKeyDataMappingHelper`): a 64-bit number, two bits per entry from the
    /// least significant: entries 0…28 are days −14…14, entry 29 the value when days are missing.
    /// Shorter strings are padded with zeros on the left, as ENX pads to 16 digits.
    static func infectiousnessMap(_ text: String) throws(ConfigurationError) -> (days: [Int: Infectiousness], missing: Infectiousness) {
        let key = "symptomOnsetToInfectiousnessMap"
        let digits = text.lowercased().hasPrefix("0x") ? text.dropFirst(2) : Substring(text)
        guard (1...16).contains(digits.count), let value = UInt64(digits, radix: 16) else {
            throw ConfigurationError(key: key, problem: "\"\(text)\" is not a hex number of at most 16 digits (0x…)")
        }
        func entry(_ index: Int) throws(ConfigurationError) -> Infectiousness {
            let bits = Int((value >> UInt64(2 * index)) & 3)
            guard let level = Infectiousness(rawValue: bits) else {
                throw ConfigurationError(key: key, problem: "entry \(index) is 3, not 0 (none), 1 (standard) or 2 (high)")
            }
            return level
        }
        var days = [Int: Infectiousness]()
        for index in 0...28 { days[index - 14] = try entry(index) }
        return (days, try entry(29))
    }
}

extension ExposureConfiguration {
    init(enx root: [String: Any]) throws(ConfigurationError) {
        let object = root["config"] as! [String: Any]
        if let unknown = AuthorityShapeKeys.unknownScoringKey(in: object, known: ENXShape.knownKeys) {
            let numbered = unknown.split(separator: "_").last.map { $0.allSatisfy(\.isNumber) } ?? false
            let problem = numbered ? "ENX has classifications 1...4 and this is not one of its keys" : "not a key of the ENX configuration"
            throw ConfigurationError(key: unknown, problem: problem)
        }
        let reader = ConfigurationReader(object: object)
        // What ENX leaves out keeps the framework builder's default: the RECURSIVE weight, which ENX
        // never sets ("not supported by the configuration tool (yet)", RiskCalculationModule), is 0.
        var v2 = V2Configuration.googleBuilderDefaults
        // The buckets the builder requires; ENX's own build fails without them.
        for (index, name) in ENXShape.bucketWeights.enumerated() {
            guard let value = try reader.number(name, in: 0...250) else {
                throw ConfigurationError(key: name, problem: "missing: the attenuation buckets are required")
            }
            v2.bucketWeights[index] = value
        }
        var thresholds = v2.attenuationThresholds
        for (index, name) in ENXShape.bucketThresholds.enumerated() {
            guard let value = try reader.integer(name, in: 0...255) else {
                throw ConfigurationError(key: name, problem: "missing: the attenuation buckets are required")
            }
            thresholds[index] = value
        }
        guard zip(thresholds, thresholds.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw ConfigurationError(key: ENXShape.bucketThresholds.joined(separator: ", "), problem: "\(thresholds) must be strictly increasing")
        }
        v2.attenuationThresholds = thresholds
        if let value = try reader.number("infectiousnessStandardWeight", in: 0...250) { v2.infectiousnessStandardWeight = value }
        if let value = try reader.number("infectiousnessHighWeight", in: 0...250) { v2.infectiousnessHighWeight = value }
        for (name, type) in ENXShape.reportTypeWeights {
            if let value = try reader.number(name, in: 0...250) { v2.reportTypeWeights[type] = value }
        }
        if let text = try reader.string("symptomOnsetToInfectiousnessMap") {
            let map = try ENXShape.infectiousnessMap(text)
            v2.infectiousnessForDaysSinceOnset = map.days
            v2.infectiousnessWhenDaysSinceOnsetMissing = map.missing
        }
        if let raw = try reader.integer("reportTypeNoneMap", in: 0...4) {
            v2.reportTypeWhenMissing = raw == 0 ? nil : ReportTypeKey(rawValue: raw)
        }
        if let value = try reader.integer("daysSinceExposureThreshold", in: 0...14) { v2.daysSinceLastExposureThreshold = value }

        var classifications = [ClassificationThresholds]()
        for index in ENXShape.classificationIndices {
            var classification = ClassificationThresholds(index: index, name: try reader.string("classificationName_\(index)") ?? "Classification \(index)")
            for (name, type) in ENXShape.classificationReportTypes {
                if let value = try reader.integer("\(name)_\(index)", in: 0...Int(Int32.max)) { classification.scoreSumByReportType[type] = Double(value) }
            }
            classification.scoreSum = Double(try reader.integer("perDaySumERVThreshold_\(index)", in: 0...Int(Int32.max)) ?? 0)
            classification.maximumScore = Double(try reader.integer("perDayMaxERVThreshold_\(index)", in: 0...Int(Int32.max)) ?? 0)
            classification.weightedDuration = Double(try reader.integer("weightedDurationAtAttenuationThreshold_\(index)", in: 0...Int(Int32.max)) ?? 0)
            classifications.append(classification)
        }
        self.init(v2: v2, rule: .classifications(classifications), format: .enx)
    }
}
