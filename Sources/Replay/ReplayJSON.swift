// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
package import Storage

extension ReplayPair {
    /// The pair as `gaenctl tools replay --json` prints it: windows in the shape `gaenctl exposures
    /// --json` writes, summaries and days as `gaenctl detect --json` names them.
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("receiver", .string(receiver)), ("transmitter", .string(transmitter)),
            ("windows", .array(windows.map(DetectionResult.json))),
            ("daily_summaries", DetectionResult.json(scores.dailySummaries, verdict: scores.verdict)),
            ("exposure_days", .array(scores.verdict.dayList.map { .string($0.description) })),
            ("classification", DetectionResult.json(scores.verdict.classification)),
        ]
        if !scores.perDay.isEmpty { members.append(("per_day", DetectionResult.json(scores.perDay))) }
        return .object(members)
    }
}

extension ReplayStatistics {
    package var json: JSONValue {
        .object(
            [
                ("rows", rows), ("receivers", receivers), ("transmitters", transmitters), ("scans", scans), ("aggregates", aggregates),
                ("keys", keys), ("matched_keys", matchedKeys), ("windows", windows), ("pairs_heard", pairsHeard),
                ("pairs_exposed", pairsExposed),
            ].map { ($0.0, JSONValue.int(Int64($0.1))) })
    }
}
