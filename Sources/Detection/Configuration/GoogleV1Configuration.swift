// SPDX-License-Identifier: GPL-3.0-or-later

/// Google's v1 `ExposureConfiguration` names (`durationAtAttenuationThresholds`,
/// `attenuationScores`, `minimumRiskScore`…), as the Netherlands served them
/// (minvws/nl-covid19-notification-app-backend `RiskCalcDefaults.json`). The v1 scores and weights
/// are read as Apple's v1 keys are; the attenuation-duration thresholds carry Google's name.
enum GoogleV1Shape {
    static let distinctiveKeys: Set<String> = ["durationAtAttenuationThresholds"]
    static let knownKeys: Set<String> = ExposureConfiguration.v1Keys.union(distinctiveKeys)
}

extension ExposureConfiguration {
    init(googleV1 object: [String: Any]) throws(ConfigurationError) {
        if let unknown = AuthorityShapeKeys.unknownScoringKey(in: object, known: GoogleV1Shape.knownKeys) {
            throw ConfigurationError(key: unknown, problem: "not a key of Google's v1 ExposureConfiguration")
        }
        let reader = ConfigurationReader(object: object)
        var v1 = V1Configuration()
        if let value = try reader.integer("minimumRiskScore", in: 0...4096) { v1.minimumRiskScore = value }
        if let scores = try reader.scores("attenuationScores") { v1.attenuationScores = scores }
        if let scores = try reader.scores("daysSinceLastExposureScores") { v1.daysSinceLastExposureScores = scores }
        if let scores = try reader.scores("durationScores") { v1.durationScores = scores }
        if let scores = try reader.scores("transmissionRiskScores") { v1.transmissionRiskScores = scores }
        if let value = try reader.number("attenuationWeight", in: 0...100) { v1.attenuationWeight = value }
        if let value = try reader.number("daysSinceLastExposureWeight", in: 0...100) { v1.daysSinceLastExposureWeight = value }
        if let value = try reader.number("durationWeight", in: 0...100) { v1.durationWeight = value }
        if let value = try reader.number("transmissionRiskWeight", in: 0...100) { v1.transmissionRiskWeight = value }
        if let thresholds = try reader.thresholds("durationAtAttenuationThresholds", counts: 2...2) { v1.attenuationDurationThresholds = thresholds }
        self.init(v2: nil, v1: v1, format: .googleV1)
    }
}
