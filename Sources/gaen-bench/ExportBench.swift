// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import ENCrypto
import Foundation
import KeyFiles
import KeyServer

/// The key server's export at national scale (issue 53's sibling, issue 55): `--keys` keys are
/// loaded into a key server's storage by the store's bulk path (SQLite in a fresh data directory,
/// or the PostgreSQL database of `--database`, which must be empty), then `gaen-keyserver export`
/// runs as a process of its own, and its files, time and peak RSS (wait4's, exactly that process)
/// are printed. Germany's clients downloaded over 900,000 keys a run in January 2022.
struct ExportBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Key server export of --keys keys: files, seconds and the exporting process's peak RSS.")

    @Option(help: "Keys waiting for the export.")
    var keys = 750_000

    @Option(help: "The storage: a postgresql:// URL of an empty database (default: SQLite in a fresh data directory).")
    var database: String?

    @Option(help: "Keys a file holds at most (gaen-keyserver export --max-keys-per-file).")
    var maxKeysPerFile = 500_000

    @Option(help: "The gaen-keyserver executable (default: the one beside gaen-bench).")
    var server: String?

    @Option(help: "Where to work (a fresh folder inside, removed after).")
    var directory = FileManager.default.currentDirectoryPath + "/.build"

    func run() async throws {
        guard keys > 0 else { throw ValidationError("--keys must be positive") }
        let serverPath = server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/gaen-keyserver"
        let work = directory + "/gaen-bench-export-\(getpid())"
        try FileManager.default.createDirectory(atPath: work + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let signing = try ECDSAPrivateKey()
        FileManager.default.createFile(atPath: work + "/export.pem", contents: Data(signing.pem.utf8), attributes: [.posixPermissions: 0o600])

        let now = UnixTime(seconds: Int64(Date().timeIntervalSince1970))
        let loadStart = ContinuousClock.now
        try await load(into: KeyStore(database.map { .postgreSQL(connectionString: $0) } ?? .sqlite(path: work + "/data/keys.sqlite")), now: now)
        let loadSeconds = Figures.seconds(ContinuousClock.now - loadStart)
        print(
            "gaen-bench export: \(Figures.grouped(Double(keys))) keys in \(database == nil ? "SQLite" : "PostgreSQL"), bulk-loaded in "
                + "\(Figures.decimals(loadSeconds, 1)) s; gaen-keyserver export (\(serverPath)), at most \(Figures.grouped(Double(maxKeysPerFile))) keys a file"
        )

        let arguments =
            [
                "export", "--data-dir", work + "/data", "--export-key", work + "/export.pem", "--region", "XB", "--directory", work + "/exports",
                "--max-keys-per-file", "\(maxKeysPerFile)",
            ] + (database.map { ["--database", $0] } ?? [])
        let export = try ChildRun(serverPath, arguments)
        guard export.status == 0 else { throw ValidationError("gaen-keyserver export failed (\(export.status)): \(export.output)") }
        let names = KeyServerBench.writtenFiles(export.output)
        let policy = SignaturePolicy(trustedKeys: [try VerificationKey(keyID: "310", keyVersion: "v1", pem: signing.publicKeyPEM)])
        var exported = 0
        for name in names {
            let path = work + "/exports/" + name
            let file = try KeyFile(zip: Array(try Data(contentsOf: URL(fileURLWithPath: path))), policy: policy)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            exported += file.export.keys.count
            let count = Figures.grouped(Double(file.export.keys.count))
            print("  \(name): \(count) keys, \(Figures.decimals(Double(size) / 1_048_576, 2)) MiB, signature verified")
        }
        print(
            "  \(names.count) files, \(Figures.grouped(Double(exported))) keys in \(Figures.decimals(export.seconds, 2)) s, "
                + "peak RSS \(export.peakKiB / 1024) MiB (goal: 10 s, 128 MiB)")
        if exported != keys { throw ValidationError("the files hold \(exported) keys, not \(keys)") }
    }

    /// `keys` random keys of the last 14 days, out of their embargo an hour ago, in transactions of
    /// 50,000 so that this process stays small.
    private func load(into store: KeyStore, now: UnixTime) async throws {
        let random = SystemRandom()
        let today = now.seconds / 86_400 * 144
        var loaded = 0
        while loaded < keys {
            let count = min(50_000, keys - loaded)
            let batch = try (0..<count).map { index in
                KeyStore.StoredKey(
                    key: try TemporaryExposureKey(
                        keyData: try random.bytes16(),
                        rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(today - 144 * Int64(1 + (loaded + index) % 14)))),
                    transmissionRisk: 2, reportType: 1, daysSinceOnsetOfSymptoms: 0)
            }
            try await store.bulkLoad(batch, healthAuthority: "bench", exportAfter: now.adding(seconds: -3600), created: now.adding(seconds: -7200))
            loaded += count
        }
    }
}
