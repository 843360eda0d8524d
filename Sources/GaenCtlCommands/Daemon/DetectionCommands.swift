// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import DBus
import Foundation

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

    @Option(help: "An exposure configuration JSON file (default: gaend's).")
    var config: String?

    func run() async throws {
        let configuration = try readConfiguration(config)
        let client = try await options.connect()
        let signals = try await client.signals()
        let terminal = isatty(1) != 0 && !options.json
        let progress = Task {
            for await signal in signals where signal.member == "DetectionProgress" {
                guard let done = signal.body.first?.uint32, let total = signal.body.last?.uint32 else { continue }
                if terminal {
                    let width = 30
                    let filled = total > 0 ? Int(Double(done) / Double(total) * Double(width)) : 0
                    FileHandle.standardOutput.write(Data("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(total) keys".utf8))
                } else if !options.json {
                    GaenCtl.writeLineNow("progress \(done)/\(total) keys")
                }
            }
        }
        defer { progress.cancel() }
        let reply = try await client.call("DetectExposures", [.string(configuration)], timeout: .seconds(20 * 60))
        progress.cancel()
        if terminal { print("") }
        let result = reply.first?.string ?? "{}"
        if options.json {
            print(result)
            return
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(result.utf8))) as? [String: Any] ?? [:]
        let statistics = object["statistics"] as? [String: Any] ?? [:]
        let files = object["files"] as? [[String: Any]] ?? []
        print("files: \(files.count), keys: \(statistics["keys"] ?? 0), matched keys: \(statistics["matched_keys"] ?? 0)")
        print("exposure windows: \((object["windows"] as? [Any])?.count ?? 0)")
        for summary in object["daily_summaries"] as? [[String: Any]] ?? [] {
            print("  \(summary["day"] ?? "?"): score \(summary["maximum_score"] ?? 0) (sum \(summary["score_sum"] ?? 0))")
        }
    }
}

/// `gaenctl exposures [--windows | --summaries --config FILE]`.
struct ExposuresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exposures", abstract: "The last detection's exposure windows (default) or daily summaries under a configuration.")

    @OptionGroup var options: DaemonOptions

    @Flag(help: "The exposure windows (the default).")
    var windows = false

    @Flag(help: "Daily summaries, scored with --config (or gaend's configuration) without matching again.")
    var summaries = false

    @Option(help: "An exposure configuration JSON file for --summaries.")
    var config: String?

    func validate() throws {
        if windows && summaries { throw ValidationError("--windows and --summaries: choose one") }
        if config != nil && !summaries { throw ValidationError("--config: only with --summaries") }
    }

    func run() async throws {
        let client = try await options.connect()
        let text: String
        if summaries {
            text = try await client.call("GetDailySummaries", [.string(try readConfiguration(config))]).first?.string ?? "[]"
        } else {
            text = try await client.call("GetExposureWindows").first?.string ?? "[]"
        }
        if options.json {
            print(text)
            return
        }
        let list = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
        if list.isEmpty { print(summaries ? "no daily summaries" : "no exposure windows") }
        for entry in list {
            print(entry.sorted { $0.key < $1.key }.filter { !($0.value is [Any]) }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
    }
}
