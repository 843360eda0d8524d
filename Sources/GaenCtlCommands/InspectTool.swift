// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import Storage
import ENCrypto
import Foundation
import KeyFiles

/// `gaenctl tools inspect`: what a key file holds and whether it can be trusted.
struct InspectTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a key file's contents and signature verdict.",
        discussion: """
            FILE is a key file archive (export.bin + export.sig) or a bare export.bin. Trusted keys are \
            given as --public-key PEM --key-id ID --key-version V, repeated together. The verdict is \
            verified, unsigned, bad-signature, unknown-key or invalid. Exit 0 only when every file is \
            valid and verified; 1 otherwise.
            """)

    @Argument(help: "Key files to inspect.", completion: .file(extensions: ["zip"]))
    var files: [String]

    @OptionGroup var trust: TrustedKeyOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let policy = try trust.policy()
        var reports = [JSONValue]()
        var allVerified = true
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw OperationError("\(path) cannot be read")
            }
            let bytes = [UInt8](data)
            let file: KeyFile
            do {
                file = bytes.starts(with: ExportBinary.header) ? try KeyFile(exportBinary: bytes) : try KeyFile(zip: bytes, policy: policy)
            } catch {
                allVerified = false
                if json {
                    reports.append(.object([("file", .string(path)), ("verdict", .string("invalid")), ("reason", .string("\(error)"))]))
                } else {
                    print("\(path)\n  verdict: invalid: \(error)")
                }
                continue
            }
            if !file.verdict.isVerified { allVerified = false }
            if json {
                reports.append(Self.json(file, path: path))
            } else {
                Self.printReport(file, path: path)
            }
        }
        if json { print(JSONValue.object([("files", .array(reports))]).serialized()) }
        if !allVerified { throw ExitCode(GaenCtlExitCode.operationFailed.rawValue) }
    }

    static func keyJSON(_ key: DiagnosisKey) -> JSONValue {
        .object([
            ("key_data", .string(key.key.keyData.hex)),
            ("rolling_start_interval_number", .int(Int64(key.key.rollingStartIntervalNumber.rawValue))),
            ("rolling_period", .int(Int64(key.key.rollingPeriod))),
            ("transmission_risk_level", .int(Int64(key.transmissionRiskLevel))),
            ("report_type", .string(key.reportType.description)),
            ("days_since_onset_of_symptoms", key.daysSinceOnsetOfSymptoms.map { .int(Int64($0)) } ?? .null),
        ])
    }

    static func json(_ file: KeyFile, path: String) -> JSONValue {
        let export = file.export
        return .object([
            ("file", .string(path)),
            ("verdict", .string(file.verdict.name)),
            ("reason", file.verdict.reason.map { .string($0) } ?? .null),
            ("ignored_entries", .array(file.ignoredEntries.map { .string($0) })),
            ("region", .string(export.region)),
            ("start_timestamp", .unsigned(export.startTimestamp)),
            ("end_timestamp", .unsigned(export.endTimestamp)),
            ("batch_num", .int(Int64(export.batchNumber))),
            ("batch_size", .int(Int64(export.batchSize))),
            (
                "signature_infos",
                .array(
                    export.signatureInfos.map {
                        .object([
                            ("verification_key_id", .string($0.verificationKeyID)),
                            ("verification_key_version", .string($0.verificationKeyVersion)),
                            ("signature_algorithm", .string($0.signatureAlgorithm)),
                        ])
                    })
            ),
            ("key_count", .int(Int64(export.keys.count))),
            ("revised_key_count", .int(Int64(export.revisedKeys.count))),
            ("keys", .array(export.keys.map(keyJSON))),
            ("revised_keys", .array(export.revisedKeys.map(keyJSON))),
            (
                "dropped_keys",
                .array(export.dropped.map { .object([("index", .int(Int64($0.index))), ("revised", .bool($0.revised)), ("reason", .string($0.reason))]) })
            ),
        ])
    }

    static func printReport(_ file: KeyFile, path: String) {
        let export = file.export
        // The file's fixed64 seconds: as a date when one holds them, else as the number they are.
        func time(_ seconds: UInt64) -> String { UnixTime(exactlySeconds: seconds).map(ISO8601.format) ?? "\(seconds) s" }
        let start = time(export.startTimestamp)
        let end = time(export.endTimestamp)
        print(path)
        print("  region \(export.region.isEmpty ? "(none)" : export.region), \(start) to \(end), batch \(export.batchNumber) of \(export.batchSize)")
        for info in export.signatureInfos { print("  signature info: \(info)") }
        print("  \(export.keys.count) keys, \(export.revisedKeys.count) revised keys, \(export.droppedCount) dropped")
        for (label, keys) in [("key", export.keys), ("revised", export.revisedKeys)] {
            for key in keys {
                let days = key.daysSinceOnsetOfSymptoms.map { "dsos \($0)" } ?? "dsos -"
                print(
                    "  \(label) \(key.key.keyData.hex) start \(key.key.rollingStartIntervalNumber) (\(key.key.utcDay)) period \(key.key.rollingPeriod) trl \(key.transmissionRiskLevel) \(key.reportType) \(days)"
                )
            }
        }
        for dropped in export.dropped { print("  dropped \(dropped)") }
        print("  verdict: \(file.verdict.reason.map { "\(file.verdict.name): \($0)" } ?? file.verdict.name)")
        if !file.ignoredEntries.isEmpty {
            print("  ignored: \(file.ignoredEntries.joined(separator: ", ")) (an app's own signature, not read; export.sig decides)")
        }
    }
}
