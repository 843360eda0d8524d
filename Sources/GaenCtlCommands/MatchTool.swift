// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ContactLog
import Detection
import ENCore
import ENCrypto
import Foundation
import KeyFiles
import Storage
import SystemCalls

/// `gaenctl tools match`: the whole detection pipeline, offline, on a data directory and key files.
struct MatchTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "match",
        abstract: "Match key files against a contact log and print exposure windows and summaries.",
        discussion: """
            Only verified files are matched (trusted keys as in `tools inspect`). CONFIG.json is the \
            health authority's configuration in any shape gaend reads (docs/detection.md). \
            Exit 0 when every file verified, 1 otherwise.
            """)

    @Option(help: "The daemon's data directory (its contacts/ log is read).", completion: .directory)
    var dataDir: String

    @Option(help: "The exposure configuration (JSON).", completion: .file(extensions: ["json"]))
    var config: String

    @Argument(help: "Key files (zip archives).", completion: .file(extensions: ["zip"]))
    var files: [String]

    @OptionGroup var trust: TrustedKeyOptions

    @Option(help: "The UTC day to count days-since-exposure from, YYYY-MM-DD (default: today).")
    var today: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let configuration = try readExposureConfiguration(config)
        // A given day is scored as at its noon, so whole days from a key's start are the days between.
        let now = try parseDay(today, argument: "--today").map { $0.start.adding(seconds: 43_200) } ?? SystemWallClock().now()
        // Read from disk as the daemon reads its spool: a range at a time, never a file whole.
        var inputs = [KeyFileSource]()
        for path in files {
            guard FileManager.default.isReadableFile(atPath: path) else { throw OperationError("\(path) cannot be read") }
            inputs.append(KeyFileSource(name: path, path: path))
        }
        let directory = try LogToolOptions.existingDirectory(dataDir)
        let pipeline = DetectionPipeline(
            reader: ContactLogReader(dataDirectory: directory), policy: try trust.policy(),
            parallelism: ProcessInfo.processInfo.activeProcessorCount)
        let result: DetectionResult
        do {
            result = try await pipeline.run(sources: inputs, configuration: configuration, now: now).result
        } catch {
            throw OperationError("\(error)")
        }
        if json {
            print(result.json.serialized())
        } else {
            Self.printText(result)
        }
        if !result.files.allSatisfy(\.verdict.isVerified) { throw ExitCode(GaenCtlExitCode.operationFailed.rawValue) }
    }

    static func printText(_ result: DetectionResult) {
        for file in result.files {
            print("\(file.name): \(file.verdictText), \(file.keys) keys")
        }
        print("\(result.statistics.keys) keys matched against the log: \(result.statistics.matchedKeys) heard, \(result.windows.count) exposure windows")
        for window in result.windows.sorted(by: { $0.day < $1.day }) {
            let instances = window.scanInstances.map { "\($0.typicalAttenuation)/\($0.minimumAttenuation) dB \($0.secondsSinceLastScan) s" }
            print("  window \(window.day) \(window.reportType) infectiousness \(window.infectiousness): \(instances.joined(separator: ", "))")
        }
        for summary in result.dailySummaries {
            print(
                "  day \(summary.day): score sum \(summary.total.scoreSum), maximum \(summary.total.maximumScore), weighted duration \(summary.total.weightedDurationSum) s"
            )
        }
        if let v1 = result.v1Summary {
            print(
                "  v1: \(v1.matchedKeyCount) keys, maximum risk score \(v1.maximumRiskScore) (full range \(v1.maximumRiskScoreFullRange)),"
                    + " summation \(v1.summationRiskScore), attenuation durations \(v1.attenuationDurationsMinutes) min")
        }
        for day in result.perDay {
            print("  per day \(day.day): low \(day.lowMinutes) min, medium \(day.mediumMinutes) min → \(day.weightedMinutes)\(day.exposed ? " EXPOSED" : "")")
        }
        if let (classification, day) = result.verdict.classification { print("  classification \(classification), latest on \(day)") }
        print(result.exposureDays.isEmpty ? "no exposure" : "exposure days: \(result.exposureDays.map(\.description).joined(separator: ", "))")
    }
}

/// The trusted keys of the key-file tools: `--public-key PEM --key-id ID --key-version V`, repeated
/// together, and `--lenient`.
struct TrustedKeyOptions: ParsableArguments {
    @Option(help: "A trusted package key (PEM file); repeat with --key-id and --key-version.", completion: .file(extensions: ["pem"]))
    var publicKey: [String] = []

    @Option(help: "The key id files name the trusted key by.")
    var keyId: [String] = []

    @Option(help: "The key version files name the trusted key by.")
    var keyVersion: [String] = []

    @Flag(help: "Accept algorithm names, raw r‖s signatures and a missing key id (old test files only).")
    var lenient = false

    /// The signature policy of these options; a bad key file or unpaired option is a usage error.
    func policy() throws -> SignaturePolicy {
        guard publicKey.count == keyId.count, keyId.count == keyVersion.count else {
            throw UsageError(
                "--public-key", "give --public-key, --key-id and --key-version together (\(publicKey.count), \(keyId.count), \(keyVersion.count) given)")
        }
        var trusted = [VerificationKey]()
        for (index, path) in publicKey.enumerated() {
            guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("--public-key", "\(path) cannot be read") }
            do {
                trusted.append(try VerificationKey(keyID: keyId[index], keyVersion: keyVersion[index], pem: String(decoding: data, as: UTF8.self)))
            } catch {
                throw UsageError("--public-key", "\(path): \(error.reason)")
            }
        }
        return SignaturePolicy(trustedKeys: trusted, lenient: lenient)
    }
}
