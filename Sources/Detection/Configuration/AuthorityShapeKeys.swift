// SPDX-License-Identifier: GPL-3.0-or-later

/// The shapes authorities served carry keys of their apps (texts, URLs, colours, countries) beside
/// the scoring ones, and gaend passes those over. A key that names a scoring quantity gaend does
/// not know is still refused, so that a misspelt weight cannot silently fall back to a default.
enum AuthorityShapeKeys {
    static let scoringWords = ["weight", "threshold", "attenuation", "infectious", "reporttype", "score", "daysince", "factor"]

    /// The first key of `object`, in sorted order, that is neither `known` nor an app's.
    static func unknownScoringKey(in object: [String: Any], known: Set<String>) -> String? {
        object.keys.sorted().first { key in
            !known.contains(key) && scoringWords.contains { key.lowercased().contains($0) }
        }
    }

    /// "NONE", "STANDARD", "HIGH" (Google's enum names) or 0, 1, 2.
    static func infectiousness(_ value: Any) -> Infectiousness? {
        if let name = value as? String {
            return ["NONE": .none, "STANDARD": .standard, "HIGH": .high][name]
        }
        return ConfigurationReader.integer(value).flatMap(Infectiousness.init(rawValue:))
    }
}
