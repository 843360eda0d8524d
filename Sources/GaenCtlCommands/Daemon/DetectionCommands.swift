// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import Foundation
import GaendAPI

/// Reads a configuration file argument (empty when absent).
func readConfiguration(_ path: String?, option: String = "--config") throws -> String {
    guard let path else { return "" }
    guard let data = FileManager.default.contents(atPath: path) else { throw UsageError(option, "\(path) cannot be read") }
    return String(decoding: data, as: UTF8.self)
}

/// `gaenctl detect [--config FILE]`: a detection now, with progress.
struct DetectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect", abstract: "Download new key files, match them and score exposures now (rate-limited by gaend).")

    @OptionGroup var options: DaemonOptions

    @Option(help: "An exposure configuration JSON file (default: gaend's).", completion: .file(extensions: ["json"]))
    var config: String?

    func run() async throws {
        let configuration = try readConfiguration(config)
        let client = try await options.connect()
        let signals = try await client.signals()
        let terminal = isatty(1) != 0 && !options.json
        let progress = Task {
            for await signal in signals where signal.member == Manager1.Signal.detectionProgress.rawValue {
                guard let done = signal.body.first?.uint32, let total = signal.body.last?.uint32 else { continue }
                if terminal {
                    let width = 30
                    let filled = total > 0 ? Int(Double(done) / Double(total) * Double(width)) : 0
                    FileHandle.standardOutput.write(
                        Data("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(total) keys".utf8))
                } else if !options.json {
                    GaenCtl.writeLineNow("progress \(done)/\(total) keys")
                }
            }
        }
        defer { progress.cancel() }
        let reply = try await client.call(.detectExposures, [.string(configuration)], timeout: .seconds(20 * 60))
        progress.cancel()
        if terminal { print("") }
        let result = reply.first?.string ?? "{}"
        if options.json {
            print(result)
            return
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(result.utf8))) as? [String: Any] ?? [:]
        print(Self.answer(object))
        let statistics = object["statistics"] as? [String: Any] ?? [:]
        let files = object["files"] as? [[String: Any]] ?? []
        print("files: \(files.count), keys: \(statistics["keys"] ?? 0), matched keys: \(statistics["matched_keys"] ?? 0)")
        print("stored results: \(statistics["new_results"] ?? 0) new, \(statistics["revisions"] ?? 0) revised")
        print("exposure windows: \((object["windows"] as? [Any])?.count ?? 0)")
        for summary in object["daily_summaries"] as? [[String: Any]] ?? [] {
            print("  \(summary["day"] ?? "?"): score \(Output.number(summary["score_sum"])) (maximum \(Output.number(summary["maximum_score"])))")
        }
        if let v1 = object["v1_summary"] as? [String: Any] {
            print("  v1: \(v1["matched_key_count"] ?? 0) keys, maximum risk score \(v1["maximum_risk_score"] ?? 0)")
        }
        let refused = Self.refusedFiles(object)
        guard refused.isEmpty else {
            // Their keys were not checked: the run is not a clean answer, and the exit code says so.
            print("\(refused.count) of \(files.count) key file\(files.count == 1 ? "" : "s") refused; their keys were not checked:")
            for file in refused {
                let reason = (file["reason"] as? String).map { ": \($0)" } ?? ""
                print("  \(file["name"] as? String ?? "?"): \(file["verdict"] as? String ?? "?")\(reason)")
            }
            throw ExitCode(GaenCtlExitCode.operationFailed.rawValue)
        }
    }

    /// The files of a run whose verdict is not `verified`: refused, their keys not checked.
    static func refusedFiles(_ result: [String: Any]) -> [[String: Any]] {
        (result["files"] as? [[String: Any]] ?? []).filter { $0["verdict"] as? String != "verified" }
    }

    /// The one line that answers the wearer, by the configuration's rule: the latest exposure day
    /// and what made it one (its score, SwissCovid's weighted minutes, or the v1 risk score), with
    /// ENX's classification when the configuration classifies; or none.
    static func answer(_ result: [String: Any]) -> String {
        let days = result["exposure_days"] as? [String] ?? []
        guard let latest = days.last else {
            // Files refused: nothing was found in what was checked, which is not "no exposure".
            let refused = refusedFiles(result).count
            return refused == 0
                ? "no exposure in the last 14 days" : "not fully checked: no exposure found, but \(refused) key file\(refused == 1 ? " was" : "s were") refused"
        }
        let earlier = days.count > 1 ? " and \(days.count - 1) earlier day\(days.count == 2 ? "" : "s")" : ""
        var measure: String
        let riskDays = (result["corona_warn_app"] as? [String: Any])?["days"] as? [[String: Any]]
        if let risk = riskDays?.first(where: { $0["day"] as? String == latest }) {
            measure = "Corona-Warn-App: \(risk["risk_level"] ?? "?") risk, normalized time \(Output.number(risk["normalized_time"]))"
        } else if let perDay = (result["per_day"] as? [[String: Any]])?.first(where: { $0["day"] as? String == latest }) {
            measure = "\(Output.number(perDay["weighted_minutes"])) weighted minutes"
        } else if let summary = (result["daily_summaries"] as? [[String: Any]])?.first(where: { $0["day"] as? String == latest }) {
            measure = "score \(Output.number(summary["score_sum"]))"
        } else {
            measure = "risk score \((result["v1_summary"] as? [String: Any])?["maximum_risk_score"] ?? 0)"
        }
        if let classification = result["classification"] as? [String: Any] {
            measure += ", classification \(classification["index"] ?? "?") (\(classification["name"] ?? "?"))"
        }
        return "exposure on \(latest) (\(measure))\(earlier)"
    }
}

/// `gaenctl exposures [--windows | --summaries --config FILE]`.
struct ExposuresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exposures", abstract: "The exposure windows of the last 14 days (default), or their daily summaries under a configuration.")

    @OptionGroup var options: DaemonOptions

    @Flag(help: "The exposure windows (the default).")
    var windows = false

    @Flag(help: "Daily summaries, scored with --config (or gaend's configuration) without matching again.")
    var summaries = false

    @Option(help: "An exposure configuration JSON file for --summaries.", completion: .file(extensions: ["json"]))
    var config: String?

    func validate() throws {
        if windows && summaries { throw ValidationError("--windows and --summaries: choose one") }
        if config != nil && !summaries { throw ValidationError("--config: only with --summaries") }
    }

    func run() async throws {
        let client = try await options.connect()
        let text: String
        if summaries {
            text = try await client.call(.getDailySummaries, [.string(try readConfiguration(config))]).first?.string ?? "[]"
        } else {
            text = try await client.call(.getExposureWindows).first?.string ?? "[]"
        }
        if options.json {
            print(text)
            return
        }
        let list = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
        if summaries {
            print(list.isEmpty ? "no daily summaries" : Self.summaryTable(list))
        } else {
            if list.isEmpty { print("no exposure windows") }
            for window in list.sorted(by: { ($0["day"] as? String ?? "") < ($1["day"] as? String ?? "") }) { print(Self.windowText(window)) }
        }
    }

    /// A window and its scan instances, one per line.
    static func windowText(_ window: [String: Any]) -> String {
        let instances = window["scan_instances"] as? [[String: Any]] ?? []
        var lines = [
            "\(window["day"] ?? "?") \(window["report_type"] ?? "?"), infectiousness \(window["infectiousness"] ?? "?"),"
                + " calibration \(window["calibration_confidence"] ?? "?"): \(instances.count) scan instance\(instances.count == 1 ? "" : "s")"
        ]
        for instance in instances {
            lines.append(
                "  typical \(instance["typical_attenuation"] ?? "?") dB, minimum \(instance["minimum_attenuation"] ?? "?") dB,"
                    + " \(instance["seconds_since_last_scan"] ?? "?") s since the last scan")
        }
        return lines.joined(separator: "\n")
    }

    /// Daily summaries as a table: a row per day and per report type under it.
    static func summaryTable(_ list: [[String: Any]]) -> String {
        var rows = [["DAY", "REPORT TYPE", "MAXIMUM SCORE", "SCORE SUM", "WEIGHTED DURATION (s)", "VERDICT"]]
        for summary in list {
            rows.append(["\(summary["day"] ?? "?")", "all"] + Self.sums(summary) + [Self.verdict(summary)])
            let byType = summary["by_report_type"] as? [String: Any] ?? [:]
            for (type, value) in byType.sorted(by: { $0.key < $1.key }) {
                rows.append(["", type] + Self.sums(value as? [String: Any] ?? [:]) + [""])
            }
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    /// The rule's verdict on a summary's day: an exposure (with ENX's classification) or not.
    static func verdict(_ summary: [String: Any]) -> String {
        guard summary["exposed"] as? Bool == true else { return "-" }
        guard let classification = summary["classification"] as? [String: Any] else { return "exposure" }
        return "exposure, classification \(classification["index"] ?? "?") (\(classification["name"] ?? "?"))"
    }

    static func sums(_ data: [String: Any]) -> [String] {
        [Output.number(data["maximum_score"]), Output.number(data["score_sum"]), Output.number(data["weighted_duration_sum"])]
    }
}
