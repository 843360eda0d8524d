// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import ENCrypto
import Foundation
import KeyFiles
import Storage
import Synchronization

/// Makes export batches the way the reference server lays them out (internal/export, worker.go and
/// exportfile.go): a batch per run of the keys whose embargo is over, in files of at most
/// `maximumKeysPerFile` keys named `<root>/<start>-<end>-<n, 5 digits>.zip`, and
/// `<root>/index.txt` listing every live file, oldest first, no trailing newline. Keys stream from
/// the database into the files a page at a time, already in the files' order (by their bytes), so
/// a batch of any size holds one page in memory (docs/keyserver.md, "Export at national scale"). Each file is
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
        /// Keys and revisions a file holds at most (the reference's EXPORT_FILE_MAX_RECORDS,
        /// 500,000); a batch with more is split.
        package var maximumKeysPerFile = 500_000
        package static let maximumKeysPerFileRange = 1...KeyFileLimits.maximumKeys
        /// Rows read from the database at a time.
        package var page = KeyStore.exportPage

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

    /// What a run did: the files it wrote (none when nothing waited, or when another replica held
    /// the export lock, which `exportingElsewhere` tells), and how it read the keys.
    package struct Run: Sendable {
        package var files: [String] = []
        /// Another replica was exporting: this run could not tell whether keys waited.
        package var exportingElsewhere = false
        /// Keys and revisions written, padding included.
        package var keys = 0
        /// Reads of the database, and the most keys one returned: all the keys a run holds at once.
        package var reads = 0
        package var largestRead = 0
    }

    /// One run: a batch if there are keys (or padding to write), then the index and retention.
    @discardableResult
    package func run(now: UnixTime) async throws -> Run {
        // Made here, not only with a file: a replica whose batches another replica wrote still
        // writes the index.
        if let directory = settings.directory { _ = try DataDirectory(path: directory + "/" + settings.root).prepare() }
        let result = Mutex(Run())
        let files = try await store.exportBatch(now: now, page: settings.page) { session in
            let keys = try write(session, now: now)
            result.withLock { $0 = Run(files: session.names, keys: keys, reads: session.reads, largestRead: session.largestRead) }
        }
        let expired = try await store.deleteBefore(now.adding(seconds: -settings.retentionDays * 86_400))
        var run = files?.isEmpty == false ? result.withLock { $0 } : Run()
        run.files = files ?? []
        run.exportingElsewhere = files == nil
        guard let directory = settings.directory else { return run }
        for name in expired { try? AtomicFile.remove(directory + "/" + name) }
        let names = try await store.batches().map(\.name)
        try AtomicFile.write(ExportFiles.index(names), to: directory + "/" + settings.root + "/index.txt", mode: 0o644)
        return run
    }

    /// Writes the session's batch as the reference splits one: the keys in their order, padding
    /// merged in, then the revisions, cut into files of at most `maximumKeysPerFile`; with more
    /// than one file, file n's end timestamp is the batch's end plus n, since Android tells files
    /// apart by start, end and batch number (all 1 of 1). Each file goes into the directory (or a
    /// temporary file), is read back once for the database, and its keys are marked a page at a
    /// time as they are written. Returns the keys written.
    func write(_ session: KeyStore.ExportSession, now: UnixTime) throws -> Int {
        let padding = try padding(session)
        let total = session.pendingKeys + padding.count + session.pendingRevisions
        let perFile = max(1, min(settings.maximumKeysPerFile, KeyFileLimits.maximumKeys))
        let fileCount = (total + perFile - 1) / perFile
        var keys = MergedKeys(session: session, padding: padding)
        var revisions = PagedKeys { after throws(DatabaseError) in try session.revisions(after: after) }
        var written = 0
        for number in 1...max(1, fileCount) {
            // Five digits, as the reference's `%05d`.
            let name = "\(settings.root)/\(session.start.seconds)-\(now.seconds)-\(String(format: "%05d", number)).zip"
            let path = settings.directory.map { $0 + "/" + name } ?? FileManager.default.temporaryDirectory.path + "/gaen-export-\(UUID().uuidString).zip"
            defer { if settings.directory == nil { try? AtomicFile.remove(path) } }
            // Keys published after the count wait for the next run: no file holds more than planned.
            let planned = min(perFile, total - written)
            let file = try session.beginFile(name: name, keys: planned)
            let header = KeyExport(
                startTimestamp: UInt64(session.start.seconds), endTimestamp: UInt64(now.seconds) + (fileCount > 1 ? UInt64(number) : 0),
                region: settings.region)
            let stream = try KeyFileStream(
                writer: KeyFileWriter(signingKey: signingKey, keyID: settings.keyID, keyVersion: settings.keyVersion), header: header, path: path)
            var marked = [KeyStore.StoredKey]()
            /// Marks what was written, 5,000 keys a statement or what is left at the end.
            func mark(revisions: Bool, atLeast: Int) throws(DatabaseError) {
                guard marked.count >= atLeast else { return }
                try session.mark(marked, revisions: revisions, file: file)
                marked.removeAll(keepingCapacity: true)
            }
            while stream.count < planned, let (key, stored) = try keys.next() {
                try stream.append(key: Self.diagnosisKey(key))
                if stored { marked.append(key) }
                try mark(revisions: false, atLeast: 5000)
            }
            try mark(revisions: false, atLeast: 1)
            while stream.count < planned, let key = try revisions.next() {
                try stream.append(revised: Self.diagnosisKey(key))
                marked.append(key)
                try mark(revisions: true, atLeast: 5000)
            }
            try mark(revisions: true, atLeast: 1)
            written += stream.count
            try stream.finish()
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            try session.store(file: file, bytes: Array(data))
            // Fewer than counted (rows no file can carry): the batch ends here.
            if written >= total || stream.count < planned { break }
        }
        return written
    }

    static func diagnosisKey(_ stored: KeyStore.StoredKey) -> DiagnosisKey {
        DiagnosisKey(
            key: stored.key, transmissionRiskLevel: stored.transmissionRisk, reportType: ReportType(rawValue: stored.reportType) ?? .confirmedTest,
            daysSinceOnsetOfSymptoms: stored.daysSinceOnsetOfSymptoms)
    }

    /// Keys nobody has, as the reference's ensureMinNumExposures (internal/export/worker.go):
    /// when fewer keys wait than the minimum (plus a random part of the padding range), random key
    /// data with the interval, period, risk, report type and days since onset of the real keys in
    /// turn, so that no field tells them apart, sorted to be merged into the file's order. A batch
    /// with no keys gets none. Only a batch smaller than the minimum is read for it, and only its
    /// first keys (as many as the padding).
    func padding(_ session: KeyStore.ExportSession) throws -> [KeyStore.StoredKey] {
        let target = min(settings.minimumRecords + Int.random(in: 0...max(0, settings.paddingRange)), KeyFileLimits.maximumKeys)
        guard session.pendingKeys > 0, session.pendingKeys < target else { return [] }
        let count = target - session.pendingKeys
        var models = [KeyStore.StoredKey]()
        var after: Bytes16?
        repeat {
            let page = try session.keys(after: after)
            models += page.keys.prefix(count - models.count)
            after = page.next
        } while after != nil && models.count < count
        guard !models.isEmpty else { return [] }
        let random = SystemRandom()
        return try (0..<count).map { index in
            var padded = models[index % models.count]
            padded.key = try TemporaryExposureKey(
                keyData: try random.bytes16(), rollingStartIntervalNumber: padded.key.rollingStartIntervalNumber, rollingPeriod: padded.key.rollingPeriod)
            return padded
        }.sorted { $0.key.keyData.bytes.lexicographicallyPrecedes($1.key.keyData.bytes) }
    }
}
