// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import ENCrypto
import Foundation
import KeyFiles
import Storage

/// Makes export batches the way the reference server lays them out (internal/export): one signed
/// file per run with the keys whose embargo is over, named `<root>/<start>-<end>-00001.zip`, and
/// `<root>/index.txt` listing every live file, oldest first, no trailing newline. Each file is
/// stored in the database with its batch (`ExportFiles` serves them, from any replica); with a
/// directory (SQLite's `--data-dir`) the files and the index are written there too, for a static
/// server. Files past the retention leave the index, the database and the directory.
package struct ExportWorker: Sendable {
    package struct Settings: Sendable {
        /// Where files and the index are also written; nil: the database alone.
        package var directory: String?
        package var root: String
        package var region: String
        package var keyID: String
        package var keyVersion: String
        /// Random keys added to reach this many, so a file's size says little (0: none).
        package var minimumRecords = 0
        /// What `minimumRecords` and `paddingRange` may be: no more keys than a file may hold.
        package static let minimumRecordsRange = 0...KeyFileLimits.maximumKeys
        /// Up to this many more, at random, so the count is not the minimum every time (the
        /// reference's EXPORT_FILE_PADDING_RANGE).
        package var paddingRange = 0
        package var retentionDays: Int64 = 14

        package init(directory: String?, root: String, region: String, keyID: String, keyVersion: String) {
            self.directory = directory
            self.root = root
            self.region = region
            self.keyID = keyID
            self.keyVersion = keyVersion
        }
    }

    package let store: KeyStore
    package let signingKey: ECDSAPrivateKey
    package let settings: Settings

    package init(store: KeyStore, signingKey: ECDSAPrivateKey, settings: Settings) {
        self.store = store
        self.signingKey = signingKey
        self.settings = settings
    }

    /// One run: a batch if there are keys (or padding to write), then the index and retention.
    /// - Returns: the name of the file written, if any (none either when nothing is pending or
    ///   when another replica is exporting at the same moment).
    @discardableResult
    package func run(now: UnixTime) async throws -> String? {
        // Made here, not only with a file: a replica whose batches another replica wrote still
        // writes the index.
        if let directory = settings.directory { _ = try DataDirectory(path: directory + "/" + settings.root).prepare() }
        let written = try await store.exportBatch(now: now) { pending in try write(pending, now: now) }
        let expired = try await store.deleteBefore(now.adding(seconds: -settings.retentionDays * 86_400))
        guard let directory = settings.directory else { return written }
        for name in expired { try? AtomicFile.remove(directory + "/" + name) }
        let names = try await store.batches().map(\.name)
        try AtomicFile.write(ExportFiles.index(names), to: directory + "/" + settings.root + "/index.txt", mode: 0o644)
        return written
    }

    /// Signs and writes one batch's file (into the directory, or a temporary file), and returns
    /// its bytes for the database; its name depends only on the batch's span, so writing it again
    /// replaces it.
    func write(_ pending: KeyStore.PendingExport, now: UnixTime) throws -> KeyStore.ExportedFile {
        var keys = pending.keys.map(Self.diagnosisKey)
        // Padding never takes the file past what it may hold with its revisions.
        let target = settings.minimumRecords + Int.random(in: 0...max(0, settings.paddingRange))
        keys += try padding(for: keys, target: min(target, KeyFileLimits.maximumKeys - pending.revised.count))
        // Sorted by their bytes, as the file holds them (`KeyFileWriter`): the order of upload
        // must not show, and sorted here in place the writer needs no second copy of 700,000 keys.
        keys.sort(by: KeyFileWriter.fileOrder)
        let export = KeyExport(
            startTimestamp: UInt64(pending.start.seconds), endTimestamp: UInt64(now.seconds), region: settings.region, keys: keys,
            revisedKeys: pending.revised.map(Self.diagnosisKey))
        let name = "\(settings.root)/\(pending.start.seconds)-\(now.seconds)-00001.zip"
        // Written a key at a time (`KeyFileWriter.write(_:toFile:)`), then read once: the bytes
        // are held once, not beside the file's parts as an archive made in memory holds them.
        let path = settings.directory.map { $0 + "/" + name } ?? FileManager.default.temporaryDirectory.path + "/gaen-export-\(UUID().uuidString).zip"
        defer { if settings.directory == nil { try? AtomicFile.remove(path) } }
        try KeyFileWriter(signingKey: signingKey, keyID: settings.keyID, keyVersion: settings.keyVersion).write(export, toFile: path)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return KeyStore.ExportedFile(name: name, bytes: Array(data))
    }

    static func diagnosisKey(_ stored: KeyStore.StoredKey) -> DiagnosisKey {
        DiagnosisKey(
            key: stored.key, transmissionRiskLevel: stored.transmissionRisk, reportType: ReportType(rawValue: stored.reportType) ?? .confirmedTest,
            daysSinceOnsetOfSymptoms: stored.daysSinceOnsetOfSymptoms)
    }

    /// Keys nobody has, as the reference's ensureMinNumExposures (internal/export/worker.go):
    /// random key data with the interval, period, risk, report type and days since onset of the
    /// real keys in turn, so that no field tells them apart. A file with no keys gets none.
    func padding(for keys: [DiagnosisKey], target: Int) throws -> [DiagnosisKey] {
        guard !keys.isEmpty, keys.count < target else { return [] }
        let random = SystemRandom()
        let count = min(target, KeyFileLimits.maximumKeys) - keys.count
        return try (0..<max(0, count)).map { index in
            var padded = keys[index % keys.count]
            padded.key = try TemporaryExposureKey(
                keyData: try random.bytes16(), rollingStartIntervalNumber: padded.key.rollingStartIntervalNumber, rollingPeriod: padded.key.rollingPeriod)
            return padded
        }
    }
}
