// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import ENCrypto
import Foundation
import KeyFiles

/// `gaenctl tools export`: a signed key file from a JSON list of keys.
struct ExportTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a signed key file (export.bin + export.sig) from keys in JSON.",
        discussion: """
            KEYS.json holds an array of keys, or an object with "temporaryExposureKeys", in the shape of \
            the publish API: {"key": base64 of 16 bytes, "rollingStartNumber": N, "rollingPeriod": 1...144 \
            (default 144), "transmissionRisk": 0...8, "reportType": 0...5, "daysSinceOnsetOfSymptoms": \
            -14...14}. The file is laid out as the reference key server writes it.
            """)

    @Option(help: "The keys, as JSON.")
    var keys: String

    @Option(help: "The P-256 signing key (PEM).", completion: .file(extensions: ["pem"]))
    var privateKey: String

    @Option(help: "The key id to name in the signature info.")
    var keyId: String

    @Option(help: "The key version to name in the signature info.")
    var keyVersion: String

    @Option(help: "The region (country code or MCC).")
    var region: String

    @Option(help: "Start of the batch window, Unix seconds (default: the earliest key's start).")
    var startTimestamp: UInt64?

    @Option(help: "End of the batch window, Unix seconds (default: the latest key's end).")
    var endTimestamp: UInt64?

    @Option(help: "Where to write the archive.", completion: .file(extensions: ["zip"]))
    var out: String

    func run() throws {
        guard let keyData = FileManager.default.contents(atPath: keys) else { throw UsageError("--keys", "\(keys) cannot be read") }
        guard let pemData = FileManager.default.contents(atPath: privateKey) else {
            throw UsageError("--private-key", "\(privateKey) cannot be read")
        }
        let signing: ECDSAPrivateKey
        do {
            signing = try ECDSAPrivateKey(pem: String(decoding: pemData, as: UTF8.self))
        } catch {
            throw UsageError("--private-key", "\(privateKey): \(error.reason)")
        }
        let parsed = try KeysJSON.parse(keyData, argument: "--keys")
        guard !parsed.isEmpty else { throw UsageError("--keys", "\(keys) holds no keys") }
        let start = startTimestamp ?? UInt64(parsed.map(\.key.rollingStartIntervalNumber.start.seconds).min()!)
        let end = endTimestamp ?? UInt64(parsed.map(\.key.end.start.seconds).max()!)
        guard start <= end else { throw UsageError("--end-timestamp", "\(end) is before the start \(start)") }
        let writer = KeyFileWriter(signingKey: signing, keyID: keyId, keyVersion: keyVersion)
        let archive: [UInt8]
        do {
            archive = try writer.archive(KeyExport(startTimestamp: start, endTimestamp: end, region: region, keys: parsed))
        } catch {
            throw OperationError("signing: \(error)")
        }
        guard FileManager.default.createFile(atPath: out, contents: Data(archive)) else {
            throw OperationError("--out: \(out) cannot be written")
        }
        print("wrote \(out): \(parsed.count) keys, \(archive.count) bytes, signed by key id '\(keyId)' version '\(keyVersion)'")
    }
}

/// Keys in the JSON shape of the publish API, read with errors that name the key and the field.
enum KeysJSON {
    static func parse(_ data: Data, argument: String) throws(UsageError) -> [DiagnosisKey] {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw UsageError(argument, "not JSON (\(error.localizedDescription))")
        }
        let list: [Any]
        if let array = root as? [Any] {
            list = array
        } else if let object = root as? [String: Any], let array = object["temporaryExposureKeys"] as? [Any] {
            list = array
        } else {
            throw UsageError(argument, "expected an array of keys or {\"temporaryExposureKeys\": [...]}")
        }
        var keys = [DiagnosisKey]()
        for (index, item) in list.enumerated() {
            guard let object = item as? [String: Any] else { throw UsageError(argument, "key \(index) is not an object") }
            func integer(_ field: String, default value: Int?, range: ClosedRange<Int>) throws(UsageError) -> Int? {
                guard let raw = object[field] else { return value }
                // JSON true/false arrive as a boolean NSNumber that `as? Int` would take for 1.
                let isBoolean = raw is NSNumber && ObjectIdentifier(type(of: raw)) != ObjectIdentifier(NSNumber.self)
                guard !isBoolean, let number = raw as? Int, range.contains(number) else {
                    throw UsageError(argument, "key \(index): \(field) \(raw) is not an integer in \(range.lowerBound)...\(range.upperBound)")
                }
                return number
            }
            guard let text = object["key"] as? String, let bytes = Data(base64Encoded: text), bytes.count == 16 else {
                throw UsageError(argument, "key \(index): key must be the base64 of 16 bytes")
            }
            guard let start = try integer("rollingStartNumber", default: nil, range: 1...Int(Int32.max)) else {
                throw UsageError(argument, "key \(index): rollingStartNumber is missing")
            }
            let period = try integer("rollingPeriod", default: 144, range: 1...144)!
            let risk = try integer("transmissionRisk", default: 0, range: 0...8)!
            let report = try integer("reportType", default: 0, range: 0...5)!
            let days = try integer("daysSinceOnsetOfSymptoms", default: nil, range: -14...14)
            let key = try! TemporaryExposureKey(
                keyData: Bytes16([UInt8](bytes))!, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(start)),
                rollingPeriod: UInt32(period))
            keys.append(
                DiagnosisKey(
                    key: key, transmissionRiskLevel: Int32(risk), reportType: ReportType(rawValue: Int32(report))!,
                    daysSinceOnsetOfSymptoms: days.map(Int32.init)))
        }
        return keys
    }
}
