// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
import KeyFiles
package import Storage

extension DetectionResult {
    /// The result as JSON, for `gaenctl tools match --json` and the D-Bus API.
    /// Windows and summaries only: no key, no identifier.
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            (
                "files",
                .array(
                    files.map {
                        .object([
                            ("name", .string($0.name)), ("verdict", .string($0.verdict.name)),
                            ("reason", $0.verdict.reason.map { .string($0) } ?? .null), ("keys", .int(Int64($0.keys))),
                            ("ignored_entries", .array($0.ignoredEntries.map { .string($0) })),
                        ])
                    })
            ),
            ("refused_files", .int(Int64(refusals?.refused.count ?? 0))),
            (
                "statistics",
                .object([
                    ("keys", .int(Int64(statistics.keys))), ("keys_skipped", .int(Int64(statistics.keysSkipped))),
                    ("matched_keys", .int(Int64(statistics.matchedKeys))),
                    ("keys_with_stored_result", .int(Int64(statistics.keysWithStoredResult))),
                    ("new_results", .int(Int64(statistics.newResults))), ("revisions", .int(Int64(statistics.revisions))),
                ])
            ),
            ("exposure_days", .array(exposureDays.map { .string($0.description) })),
            ("last_exposure", lastExposure.map { .int($0.seconds) } ?? .null),
            ("classification", Self.json(verdict.classification)),
            ("windows", .array(windows.map(Self.json))),
            ("daily_summaries", Self.json(dailySummaries, verdict: verdict)),
        ]
        if let v1Summary {
            members.append(
                (
                    "v1_summary",
                    .object([
                        ("days_since_last_exposure", v1Summary.daysSinceLastExposure.map { .int(Int64($0)) } ?? .null),
                        ("matched_key_count", .int(Int64(v1Summary.matchedKeyCount))),
                        ("maximum_risk_score", .int(Int64(v1Summary.maximumRiskScore))),
                        ("maximum_risk_score_full_range", .int(Int64(v1Summary.maximumRiskScoreFullRange))),
                        ("summation_risk_score", .int(Int64(v1Summary.summationRiskScore))),
                        ("risk_score_sum_full_range", .int(Int64(v1Summary.summationRiskScore))),
                        ("attenuation_durations_minutes", .array(v1Summary.attenuationDurationsMinutes.map { .int(Int64($0)) })),
                    ])
                ))
            members.append(
                (
                    "v1_exposures",
                    .array(
                        v1Exposures.map {
                            .object([
                                ("date", .string($0.date.description)), ("days_since_exposure", .int(Int64($0.daysSinceExposure))),
                                ("duration_minutes", .int(Int64($0.durationMinutes))),
                                ("attenuation_value", .int(Int64($0.attenuationValue))),
                                ("transmission_risk_level", .int(Int64($0.transmissionRiskLevel))),
                                ("total_risk_score", .int(Int64($0.totalRiskScore))),
                                ("attenuation_durations_seconds", .array($0.attenuationDurations.map { .int(Int64($0)) })),
                            ])
                        })
                ))
        }
        if !perDay.isEmpty { members.append(("per_day", Self.json(perDay))) }
        if let coronaWarnApp { members.append(("corona_warn_app", Self.json(coronaWarnApp))) }
        return .object(members)
    }

    /// Corona-Warn-App's result as JSON: its aggregated fields, and each day with a risk level.
    package static func json(_ risk: CoronaWarnAppRiskResult) -> JSONValue {
        .object([
            ("total_risk_level", .string(risk.totalRiskLevel.description)),
            ("most_recent_date_with_low_risk", risk.mostRecentDateWithLowRisk.map { .string($0.description) } ?? .null),
            ("most_recent_date_with_high_risk", risk.mostRecentDateWithHighRisk.map { .string($0.description) } ?? .null),
            ("total_minimum_distinct_encounters_with_low_risk", .int(Int64(risk.totalMinimumDistinctEncountersWithLowRisk))),
            ("total_minimum_distinct_encounters_with_high_risk", .int(Int64(risk.totalMinimumDistinctEncountersWithHighRisk))),
            ("number_of_days_with_low_risk", .int(Int64(risk.numberOfDaysWithLowRisk))),
            ("number_of_days_with_high_risk", .int(Int64(risk.numberOfDaysWithHighRisk))),
            (
                "days",
                .array(
                    risk.days.map {
                        .object([
                            ("day", .string($0.day.description)), ("risk_level", .string($0.riskLevel.description)),
                            ("normalized_time", .number($0.normalizedTime)),
                            ("minimum_distinct_encounters_with_low_risk", .int(Int64($0.minimumDistinctEncountersWithLowRisk))),
                            ("minimum_distinct_encounters_with_high_risk", .int(Int64($0.minimumDistinctEncountersWithHighRisk))),
                        ])
                    })
            ),
        ])
    }

    /// The per-day check's days as JSON.
    package static func json(_ perDay: [PerDayResult]) -> JSONValue {
        .array(
            perDay.map {
                .object([
                    ("day", .string($0.day.description)), ("low_minutes", .number($0.lowMinutes)), ("medium_minutes", .number($0.mediumMinutes)),
                    ("weighted_minutes", .number($0.weightedMinutes)), ("exposed", .bool($0.exposed)),
                ])
            })
    }

    /// ENX's overall classification, with the latest day that reached it, or null.
    package static func json(_ classification: (Classification, UTCDay)?) -> JSONValue {
        guard let (classification, day) = classification else { return .null }
        return .object([("index", .int(Int64(classification.index))), ("name", .string(classification.name)), ("day", .string(day.description))])
    }

    /// Daily summaries as JSON, each with the verdict on its day: whether the rule calls it an
    /// exposure, and the classification it reached.
    package static func json(_ summaries: [DailySummary], verdict: ExposureVerdict) -> JSONValue {
        let days = Dictionary(verdict.days.map { ($0.day, $0) }, uniquingKeysWith: { first, _ in first })
        return .array(
            summaries.map { summary in
                guard case .object(var members) = json(summary) else { return json(summary) }
                let day = days[summary.day]
                members.append(("exposed", .bool(day != nil)))
                members.append(
                    (
                        "classification",
                        day?.classification.map { .object([("index", .int(Int64($0.index))), ("name", .string($0.name))]) } ?? .null
                    ))
                return .object(members)
            })
    }

    /// A window as JSON; `ExposureWindow(json:)` reads it back.
    package static func json(_ window: ExposureWindow) -> JSONValue {
        .object([
            ("day", .string(window.day.description)), ("report_type", .string(window.reportType.description)),
            ("infectiousness", .string(window.infectiousness.description)),
            ("calibration_confidence", .string(window.calibrationConfidence.description)),
            (
                "scan_instances",
                .array(
                    window.scanInstances.map {
                        .object([
                            ("typical_attenuation", .int(Int64($0.typicalAttenuation))),
                            ("minimum_attenuation", .int(Int64($0.minimumAttenuation))),
                            ("seconds_since_last_scan", .int(Int64($0.secondsSinceLastScan))),
                        ])
                    })
            ),
        ])
    }

    static func json(_ summary: DailySummary) -> JSONValue {
        func data(_ value: SummaryData) -> [(String, JSONValue)] {
            [
                ("maximum_score", .number(value.maximumScore)), ("score_sum", .number(value.scoreSum)),
                ("weighted_duration_sum", .number(value.weightedDurationSum)),
            ]
        }
        let byType = summary.byReportType.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            (ReportType(rawValue: Int32($0.key.rawValue))!.description, JSONValue.object(data($0.value)))
        }
        return .object([("day", .string(summary.day.description))] + data(summary.total) + [("by_report_type", .object(byType))])
    }
}
