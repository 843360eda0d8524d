// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation

/// The shapes health authorities served their configurations in, each recognised from its keys
/// (docs/detection.md, "Configuration"). Each reader refuses what gaend cannot honour and names the
/// key; keys of an app's UI in the shapes that carry them are passed over.
package enum ConfigurationFormat: String, Hashable, Sendable, CaseIterable {
    /// Apple's `ENExposureConfiguration` dictionary (v2 and v1 names; gaend's own shape).
    case apple = "apple"
    /// Google's `DailySummariesConfig` and `DiagnosisKeysDataMapping` in JSON, as Finland's
    /// Koronavilkku serves them (`GET /exposure/configuration/v2`).
    case googleDailySummaries = "google-daily-summaries"
    /// The Exposure Notifications Express configuration (google/exposure-notifications-android
    /// `app/configs/sample.json`), its classifications included.
    case enx = "enx"
    /// SwissCovid's `GAENSDKConfig`, alone or in the app configuration that carries it.
    case swissCovid = "swisscovid"
    /// Google's v1 `ExposureConfiguration` names, as the Netherlands served them
    /// (`RiskCalcDefaults.json`).
    case googleV1 = "google-v1"
    /// Corona-Warn-App's application configuration, Android's or iOS's, judged by its own rule
    /// (`riskCalculationParameters`).
    case coronaWarnApp = "corona-warn-app"

    package var name: String {
        switch self {
        case .apple: "Apple ENExposureConfiguration"
        case .googleDailySummaries: "Google DailySummariesConfig"
        case .enx: "Exposure Notifications Express"
        case .swissCovid: "SwissCovid GAENSDKConfig"
        case .googleV1: "Google v1 ExposureConfiguration"
        case .coronaWarnApp: "Corona-Warn-App riskCalculationParameters"
        }
    }

    /// The shape `object` is in: the first whose distinctive keys it carries, Apple's otherwise
    /// (whose reader then names any key it does not know).
    static func recognise(_ object: [String: Any]) -> ConfigurationFormat {
        if object["config"] is [String: Any] { return .enx }
        let keys = Set(object.keys)
        // Before Google's messages, which CWA's Android configuration also carries: its rule is its own.
        if !keys.isDisjoint(with: CoronaWarnAppShape.distinctiveKeys) { return .coronaWarnApp }
        if !keys.isDisjoint(with: SwissCovidShape.distinctiveKeys) { return .swissCovid }
        if !keys.isDisjoint(with: GoogleDailySummariesShape.distinctiveKeys) { return .googleDailySummaries }
        if !keys.isDisjoint(with: GoogleV1Shape.distinctiveKeys) { return .googleV1 }
        return .apple
    }
}

extension ExposureConfiguration {
    /// The largest configuration read: Koronavilkku's is 2 KB and ENX's, with its texts, 12 KB.
    package static let maximumBytes = 256 << 10

    /// Reads the configuration file at `path`, never more than one byte past the limit (issue 40:
    /// the file was read whole before its size was checked, and /dev/zero is a file too). Nil when
    /// it cannot be opened.
    package init?(contentsOf path: String) throws(ConfigurationError) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: Self.maximumBytes + 1) ?? Data()
        } catch {
            return nil
        }
        guard data.count <= Self.maximumBytes else {
            throw ConfigurationError(key: "", problem: "more than \(Self.maximumBytes) bytes, over the limit")
        }
        try self.init(json: data)
    }

    /// Reads a configuration in any shape gaend knows, recognised from its keys.
    package init(json data: Data) throws(ConfigurationError) {
        guard data.count <= Self.maximumBytes else {
            throw ConfigurationError(key: "", problem: "\(data.count) bytes, over the \(Self.maximumBytes)-byte limit")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(key: "", problem: "not JSON (\(error.localizedDescription))")
        }
        guard let object = root as? [String: Any] else { throw ConfigurationError(key: "", problem: "not a JSON object") }
        if let duplicate = JSONDuplicateKeys.first(in: [UInt8](data)) {
            throw ConfigurationError(key: duplicate.key, problem: "appears twice in \(duplicate.path): which one the authority meant cannot be known")
        }
        let format = ConfigurationFormat.recognise(object)
        if let section = RuleSections.unread(in: object, format: format) {
            throw ConfigurationError(
                key: section.key, problem: "\(section.what), which gaend does not implement: refused rather than judged by another section")
        }
        switch format {
        case .apple: try self.init(apple: object)
        case .googleDailySummaries: try self.init(googleDailySummaries: object)
        case .enx: try self.init(enx: object)
        case .swissCovid: try self.init(swissCovid: object)
        case .googleV1: try self.init(googleV1: object)
        case .coronaWarnApp: try self.init(coronaWarnApp: object)
        }
    }
}

/// The sections of served configurations that hold an authority's rule. A configuration carrying
/// one that its shape's reader does not read is refused by name (issue 46: CWA's rule was passed
/// over and its framework section judged instead), whatever else beside it gaend could read.
enum RuleSections {
    /// Rule sections gaend knows and does not implement.
    static let unimplemented: [String: String] = [
        "riskScoreClasses": "Corona-Warn-App 1.x's risk score classes",
        "attenuationDuration": "Corona-Warn-App 1.x's attenuation-duration weights and normalization",
        "minRiskScore": "Corona-Warn-App 1.x's minimum risk score",
    ]
    /// Words that name a rule in a section's key, beyond the scoring words every reader refuses.
    static let ruleWords = ["risk", "normalizedtime", "trl"]
    /// The rule sections each shape reads at the top level of what was served.
    static let read: [ConfigurationFormat: Set<String>] = [.coronaWarnApp: [CoronaWarnAppShape.rulesKey]]

    /// The first top-level key, in sorted order, that is a rule section `format`'s reader does not
    /// read, with what it is. The shapes read flat (Apple's, Google's v1 and DailySummariesConfig
    /// names) name their unknown keys themselves.
    static func unread(in object: [String: Any], format: ConfigurationFormat) -> (key: String, what: String)? {
        let readHere = read[format] ?? []
        for key in object.keys.sorted() where !readHere.contains(key) {
            if let what = unimplemented[key] { return (key, what) }
            guard format == .coronaWarnApp || format == .enx || format == .swissCovid else { continue }
            if ruleWords.contains(where: { key.lowercased().contains($0) }) { return (key, "a rule section of an unknown shape") }
        }
        return nil
    }
}
