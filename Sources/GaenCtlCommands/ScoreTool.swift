// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Detection
import ENCore
import Foundation
import Storage
import SystemCalls

/// `gaenctl tools score`: exposure windows scored under a configuration, offline, with the code the
/// daemon runs (`ExposureJudge`): for health authorities choosing thresholds, and for tests.
struct ScoreTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "score",
        abstract: "Score exposure windows under a configuration: daily summaries and the verdict per day.",
        discussion: """
            WINDOWS.json is an array of windows as `gaenctl exposures --json` writes them, or in the \
            Android API's names (dateMillisSinceEpoch or ageInDays, reportType, scanInstances...). \
            CONFIG.json is any configuration gaend reads (docs/detection.md). Exit 0 whatever the \
            verdict; 2 when a file cannot be read, naming the key or the window.
            """)

    @Option(help: "The exposure configuration (JSON, in any shape gaend reads).", completion: .file(extensions: ["json"]))
    var config: String

    @Argument(help: "The exposure windows (a JSON array).", completion: .file(extensions: ["json"]))
    var windows: String

    @Option(help: "The UTC day to score on, YYYY-MM-DD (default: today).")
    var today: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let configuration = try readExposureConfiguration(config)
        guard !configuration.isV1Only else {
            throw UsageError("--config", "\(config) is a v1 configuration, which scores keys' sightings, not windows (use tools match)")
        }
        let day = try parseDay(today, argument: "--today") ?? UTCDay(containing: SystemWallClock().now())
        guard let data = FileManager.default.contents(atPath: windows) else { throw UsageError("WINDOWS", "\(windows) cannot be read") }
        let file: WindowsFile
        do {
            file = try WindowsFile(json: data, today: day)
        } catch {
            throw UsageError("WINDOWS", "\(windows): \(error)")
        }
        let scores = ExposureJudge.score(file.windows, configuration: configuration, today: day)
        if json {
            print(Self.json(scores, configuration: configuration, file: file).serialized())
        } else {
            Self.printText(scores, configuration: configuration, file: file)
        }
    }

    static func json(_ scores: WindowScores, configuration: ExposureConfiguration, file: WindowsFile) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("configuration_format", .string(configuration.format.rawValue)),
            ("windows", .int(Int64(file.windows.count))),
            ("clamped_scan_instances", .int(Int64(file.clampedScanInstances))),
            ("exposure_days", .array(scores.verdict.dayList.map { .string($0.description) })),
            ("classification", DetectionResult.json(scores.verdict.classification)),
            ("daily_summaries", DetectionResult.json(scores.dailySummaries, verdict: scores.verdict)),
        ]
        if configuration.perDay != nil { members.append(("per_day", DetectionResult.json(scores.perDay))) }
        if let risk = scores.coronaWarnApp { members.append(("corona_warn_app", DetectionResult.json(risk))) }
        return .object(members)
    }

    static func printText(_ scores: WindowScores, configuration: ExposureConfiguration, file: WindowsFile) {
        print("\(file.windows.count) windows under \(configuration.format.name)")
        if file.clampedScanInstances > 0 {
            print("\(file.clampedScanInstances) scan instances had a negative secondsSinceLastScan, counted as 0 s")
        }
        let exposed = Set(scores.verdict.dayList)
        let classes = Dictionary(scores.verdict.days.map { ($0.day, $0.classification) }, uniquingKeysWith: { first, _ in first })
        for summary in scores.dailySummaries {
            var line =
                "day \(summary.day): score sum \(summary.total.scoreSum), maximum \(summary.total.maximumScore), weighted duration \(summary.total.weightedDurationSum) s"
            if exposed.contains(summary.day) {
                line += ": EXPOSURE"
                if let classification = classes[summary.day] ?? nil { line += ", classification \(classification)" }
            }
            print(line)
        }
        for day in scores.perDay {
            print("per day \(day.day): low \(day.lowMinutes) min, medium \(day.mediumMinutes) min → \(day.weightedMinutes)\(day.exposed ? ": EXPOSURE" : "")")
        }
        if let risk = scores.coronaWarnApp { printText(risk) }
        if let (classification, day) = scores.verdict.classification { print("classification \(classification), latest on \(day)") }
        print(exposed.isEmpty ? "no exposure" : "exposure days: \(scores.verdict.dayList.map(\.description).joined(separator: ", "))")
    }
}

extension ScoreTool {
    /// Corona-Warn-App's verdict as its risk card would put it: the total risk, and per day.
    static func printText(_ risk: CoronaWarnAppRiskResult) {
        for day in risk.days {
            print(
                "risk \(day.day): normalized time \(Output.number(day.normalizedTime)), \(day.riskLevel) risk"
                    + " (\(day.minimumDistinctEncountersWithHighRisk) high-risk, \(day.minimumDistinctEncountersWithLowRisk) low-risk encounters)"
                    + (day.riskLevel == .high ? ": EXPOSURE" : ""))
        }
        let latest = risk.totalRiskLevel == .high ? risk.mostRecentDateWithHighRisk : risk.mostRecentDateWithLowRisk
        print(
            "Corona-Warn-App: \(risk.totalRiskLevel) risk, \(risk.numberOfDaysWithHighRisk) day(s) of high risk and \(risk.numberOfDaysWithLowRisk) of low risk"
                + (latest.map { ", the latest on \($0)" } ?? ""))
    }
}

/// Reads an exposure configuration file in any shape gaend reads; exit 2 naming the file and key.
func readExposureConfiguration(_ path: String, option: String = "--config") throws(UsageError) -> ExposureConfiguration {
    let read: ExposureConfiguration?
    do {
        read = try ExposureConfiguration(contentsOf: path)
    } catch {
        throw UsageError(option, "\(path): \(error)")
    }
    guard let read else { throw UsageError(option, "\(path) cannot be read") }
    return read
}
