// SPDX-License-Identifier: GPL-3.0-or-later

import PostgreSQL
package import ENCore

extension KeyStore {
    /// A key as exports carry it.
    package struct StoredKey: Sendable, Equatable {
        package var key: TemporaryExposureKey
        package var transmissionRisk: Int32
        package var reportType: Int32
        package var daysSinceOnsetOfSymptoms: Int32?

        package init(key: TemporaryExposureKey, transmissionRisk: Int32, reportType: Int32, daysSinceOnsetOfSymptoms: Int32?) {
            self.key = key
            self.transmissionRisk = transmissionRisk
            self.reportType = reportType
            self.daysSinceOnsetOfSymptoms = daysSinceOnsetOfSymptoms
        }
    }

    /// One read of waiting keys: those a file can carry, and where the next read starts (nil
    /// when this was the last).
    package struct ExportPage: Sendable {
        package var keys: [StoredKey]
        package var next: Bytes16?
    }

    /// The export transaction as `exportBatch`'s body sees it: how many keys and revisions wait,
    /// where the batch's span starts, the waiting keys a page at a time in key order (the order a
    /// file holds them in), and the files recorded as they are made. Valid only inside the body.
    package final class ExportSession {
        /// Keys out of their embargo and not exported yet.
        package let pendingKeys: Int
        /// Revisions likewise, of keys already exported.
        package let pendingRevisions: Int
        /// Where the batch's span starts: the last batch's end, or a day back for the first.
        package let start: UnixTime
        /// Rows one read returns at most.
        package let page: Int
        /// The most keys one read returned, and how many reads there were.
        package private(set) var largestRead = 0
        package private(set) var reads = 0

        private let database: any Database
        private let now: UnixTime
        private var files: [(batch: DatabaseValue, name: String)] = []

        init(database: any Database, now: UnixTime, page: Int) throws(DatabaseError) {
            self.database = database
            self.now = now
            self.page = page
            func count(_ condition: String) throws(DatabaseError) -> Int {
                Int(try database.query("SELECT COUNT(*) FROM exposure WHERE \(condition)", [.integer(now.seconds)]).first?.first?.integer ?? 0)
            }
            pendingKeys = try count(KeyStore.pendingKeys)
            pendingRevisions = try count(KeyStore.pendingRevisions)
            // An end before 1970 or past UnixTime's range starts no batch (its file names the start
            // as a uint64): the first batch's day back is taken instead.
            let lastEnd = try database.query("SELECT end_time FROM export_batch ORDER BY end_time DESC LIMIT 1").first?.first?.integer
                .flatMap { UnixTime(exactlySeconds: $0) }.flatMap { $0.seconds >= 0 ? $0 : nil }
            start = lastEnd ?? now.adding(seconds: -86_400)
        }

        /// Up to a page of the waiting keys after `after` (from the first if nil), in key order.
        package func keys(after: Bytes16?) throws(DatabaseError) -> ExportPage {
            try read(KeyStore.pendingKeys, columns: "transmission_risk, report_type, days_since_onset", after: after)
        }

        /// Up to a page of the waiting revisions after `after`, in key order, each with the
        /// revision's own values (the reference's RevisedDaysSinceSymptomOnset and
        /// RevisedTransmissionRisk; a revision stored before they were kept has its key's risk).
        package func revisions(after: Bytes16?) throws(DatabaseError) -> ExportPage {
            try read(
                KeyStore.pendingRevisions, columns: "COALESCE(revised_transmission_risk, transmission_risk), revised_report_type, revised_days_since_onset",
                after: after)
        }

        private func read(_ condition: String, columns: String, after: Bytes16?) throws(DatabaseError) -> ExportPage {
            // Keyset pagination on the primary key: every key sorts after the empty one.
            let rows = try database.query(
                "SELECT key, rolling_start, rolling_period, \(columns) FROM exposure WHERE (\(condition)) AND key > ?2 ORDER BY key LIMIT \(page)",
                [.integer(now.seconds), .blob(after?.bytes ?? [])])
            reads += 1
            largestRead = max(largestRead, rows.count)
            // A row no file can carry is left out; the next read still starts after it.
            let next = rows.count == page ? rows.last?[0].blob.flatMap(Bytes16.init) : nil
            return ExportPage(keys: rows.compactMap(KeyStore.storedKey), next: next)
        }

        /// Records a file of the batch, named `name`, holding `keys` keys and revisions; returns
        /// its number for `mark` and `store`.
        package func beginFile(name: String, keys: Int) throws(DatabaseError) -> Int {
            let batch =
                try database.query(
                    "INSERT INTO export_batch (start, end_time, name, keys, created) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                    [.integer(start.seconds), .integer(now.seconds), .text(name), .integer(Int64(keys)), .integer(now.seconds)]
                ).first?.first ?? .null
            files.append((batch, name))
            return files.count - 1
        }

        /// Records `keys` as exported in file `file`, by name rather than by a condition: a key
        /// published meanwhile is not in the file, so it must not be marked. On PostgreSQL in one
        /// statement whose keys travel as one blob, cut apart by the server: a statement costs a
        /// round trip and a plan, and statements of 500 listed keys made 750,000 keys take 24 s,
        /// against 100,000 keys in 18 s a statement per key. On SQLite, in the same process, in
        /// statements of 500 listed keys.
        package func mark(_ keys: some Collection<StoredKey>, revisions: Bool, file: Int) throws(DatabaseError) {
            let column = revisions ? "revision_exported_batch" : "exported_batch"
            let keys = Array(keys)
            guard !keys.isEmpty else { return }
            if database.engine == .postgreSQL {
                try database.query(
                    """
                    UPDATE exposure SET \(column) = ?1 WHERE key IN
                        (SELECT substring(?2 FROM (n * 16 + 1)::integer FOR 16) FROM generate_series(0, (?3)::integer - 1) AS n)
                    """, [files[file].batch, .blob(keys.flatMap(\.key.keyData.bytes)), .integer(Int64(keys.count))])
                return
            }
            var start = 0
            while start < keys.count {
                let chunk = keys[start..<min(keys.count, start + 500)]
                let placeholders = (0..<chunk.count).map { "?\($0 + 2)" }.joined(separator: ", ")
                try database.query(
                    "UPDATE exposure SET \(column) = ?1 WHERE key IN (\(placeholders))", [files[file].batch] + chunk.map { .blob($0.key.keyData.bytes) })
                start += chunk.count
            }
        }

        /// Stores file `file`'s bytes, which every replica then serves.
        package func store(file: Int, bytes: [UInt8]) throws(DatabaseError) {
            try database.query(
                "INSERT INTO export_file (name, data, etag, created) VALUES (?1, ?2, ?3, ?4)",
                [.text(files[file].name), .blob(bytes), .text(ExportFiles.entityTag(bytes)), .integer(now.seconds)])
        }

        /// The files begun, in order.
        package var names: [String] { files.map(\.name) }
    }

    static let pendingKeys = "exported_batch IS NULL AND export_after <= ?1"
    static let pendingRevisions =
        "exported_batch IS NOT NULL AND revised_report_type IS NOT NULL AND revision_exported_batch IS NULL AND export_after <= ?1"

    /// Exports the next batch, if keys or revisions wait: `write` reads them a page at a time from
    /// the session, writes its files and records them, all in one transaction that holds the
    /// export lock, so that replicas sharing a PostgreSQL database never put a key in two batches,
    /// and a batch is listed only once every replica can serve its files. A replica that finds the
    /// lock taken exports nothing this time: the holder's batch has the keys. If `write` throws,
    /// nothing is recorded.
    ///
    /// `write` runs again if the transaction loses a race with another session (PostgreSQL), so it
    /// must replace any file it wrote the first time, which it does when a name depends only on
    /// the batch's span and the file's number.
    /// - Returns: the names of the files `write` began, none when nothing waited; nil when another
    ///   session held the export lock.
    package func exportBatch(now: UnixTime, page: Int = exportPage, write: @Sendable (ExportSession) throws -> Void) throws -> [String]? {
        try database.transaction { () throws -> [String]? in
            guard try database.lock(.export, wait: false) else { return nil }
            let session = try ExportSession(database: database, now: now, page: max(1, page))
            guard session.pendingKeys + session.pendingRevisions > 0 else { return [] }
            try write(session)
            return session.names
        }
    }

    /// Rows read per statement: the rows of a statement are held as values, about 200 bytes each;
    /// the keys kept are about 40.
    package static let exportPage = 10_000

    /// A row as a key; nil for one no key file can carry (a damaged file, a replica with another
    /// schema): every conversion is checked, since the database is read, not trusted.
    static func storedKey(_ row: [DatabaseValue]) -> StoredKey? {
        guard let bytes = row[0].blob.flatMap(Bytes16.init), let start = row[1].integer.flatMap({ UInt32(exactly: $0) }),
            let period = row[2].integer.flatMap({ UInt32(exactly: $0) }),
            let key = try? TemporaryExposureKey(keyData: bytes, rollingStartIntervalNumber: ENIntervalNumber(rawValue: start), rollingPeriod: period),
            let risk = Int32(exactly: row[3].integer ?? 0), let reportType = Int32(exactly: row[4].integer ?? 1)
        else { return nil }
        var onset: Int32?
        if let stored = row[5].integer {
            guard let narrow = Int32(exactly: stored) else { return nil }
            onset = narrow
        }
        return StoredKey(key: key, transmissionRisk: risk, reportType: reportType, daysSinceOnsetOfSymptoms: onset)
    }

    /// The batches, oldest first: (name, start, end).
    package func batches() throws(DatabaseError) -> [(name: String, start: UnixTime, end: UnixTime)] {
        try database.query("SELECT name, start, end_time FROM export_batch ORDER BY end_time, name").compactMap { row in
            guard let name = row[0].text, let start = row[1].integer.flatMap({ UnixTime(exactlySeconds: $0) }),
                let end = row[2].integer.flatMap({ UnixTime(exactlySeconds: $0) })
            else { return nil }
            return (name, start, end)
        }
    }

    /// Forgets batches that ended before `cutoff`, and keys whose intervals ended before it.
    package func deleteBefore(_ cutoff: UnixTime) throws -> [String] {
        try database.transaction { () throws -> [String] in
            let names = try database.query("DELETE FROM export_batch WHERE end_time < ?1 RETURNING name", [.integer(cutoff.seconds)]).compactMap {
                $0.first?.text
            }
            try database.query("DELETE FROM export_file WHERE name NOT IN (SELECT name FROM export_batch)")
            let cutoffInterval = cutoff.seconds / ENIntervalNumber.seconds
            try database.query("DELETE FROM exposure WHERE rolling_start + rolling_period < ?1", [.integer(cutoffInterval)])
            return names
        }
    }
}
