// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import ENCrypto
import KeyFiles

/// Key file figures: read, parse and verify a signed file of 750,000 keys.
struct KeyFileBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyfile", abstract: "Key files: unzip, parse and verify a generated signed file (goal: 750,000 keys in under 1 s).")

    @Option(help: "Keys in the generated file.")
    var keys = 750_000

    @Option(help: "Measured runs; the best is reported.")
    var runs = 3

    func run() throws {
        var generator = SplitMix64(seed: 42)
        let today = ENIntervalNumber(rawValue: 2_900_000).rollingStart
        // Like a real day's export: keys of the last 14 days, mostly whole days, confirmed tests.
        let diagnosisKeys = (0..<keys).map { index in
            DiagnosisKey(
                key: try! TemporaryExposureKey(
                    keyData: Bytes16(words: (generator.next(), generator.next())),
                    rollingStartIntervalNumber: today.advanced(by: -144 * Int(generator.next() % 14)),
                    rollingPeriod: index % 20 == 0 ? UInt32(generator.next() % 144 + 1) : 144),
                transmissionRiskLevel: Int32(generator.next() % 9), reportType: .confirmedTest,
                daysSinceOnsetOfSymptoms: Int32(generator.next() % 29) - 14)
        }
        let signing = try ECDSAPrivateKey()
        let writer = KeyFileWriter(signingKey: signing, keyID: "310", keyVersion: "v1")
        let zip = try writer.archive(KeyExport(startTimestamp: 1, endTimestamp: 2, region: "US", keys: diagnosisKeys))
        let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])

        let clock = ContinuousClock()
        var best = Duration.seconds(1_000)
        var phases = (unzip: Duration.zero, parse: Duration.zero, verify: Duration.zero)
        for _ in 0..<runs {
            var archive: KeyFileArchive?
            var export: KeyExport?
            var verdict: Verdict?
            let unzip = try clock.measure { archive = try KeyFileArchive(zip: zip) }
            let parse = try clock.measure { export = try ExportBinary.parse(archive!.exportBinary) }
            let verify = clock.measure {
                verdict = policy.verdict(exportBinary: archive!.exportBinary, exportSignature: archive!.exportSignature, export: export!)
            }
            guard verdict?.isVerified == true, export?.keys.count == keys else { throw ExitCode.failure }
            if unzip + parse + verify < best {
                best = unzip + parse + verify
                phases = (unzip, parse, verify)
            }
        }
        print("gaen-bench keyfile: \(keys) keys, \(Figures.grouped(Double(zip.count))) bytes zipped, best of \(runs)")
        print("  unzip                     \(Figures.decimals(Figures.seconds(phases.unzip), 3)) s")
        print("  parse and validate        \(Figures.decimals(Figures.seconds(phases.parse), 3)) s")
        print("  verify signature          \(Figures.decimals(Figures.seconds(phases.verify), 3)) s")
        print("  total                     \(Figures.decimals(Figures.seconds(best), 3)) s (\(Figures.grouped(Double(keys) / Figures.seconds(best))) keys/s)")
    }
}
