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
    }

    /// What the next batch holds: keys out of their embargo and not exported yet, and revisions
    /// likewise, and where its time span starts (the last batch's end, or a day back for the first).
    package struct PendingExport: Sendable {
        package var keys: [StoredKey]
        package var revised: [StoredKey]
        package var start: UnixTime
        package var isEmpty: Bool { keys.isEmpty && revised.isEmpty }
    }

    /// A signed file an export made: its name under the exports and its bytes.
    package struct ExportedFile: Sendable {
        package var name: String
        package var bytes: [UInt8]
        package init(name: String, bytes: [UInt8]) {
            self.name = name
            self.bytes = bytes
        }
    }

    /// Exports the next batch, if there is one: chooses its keys, has `write` sign the file and
    /// name it, and records the batch with the file's bytes and marks its keys exported, all in
    /// one transaction that holds the export lock, so that replicas sharing a PostgreSQL database
    /// never put a key in two batches, and a batch is listed only once every replica can serve
    /// its file. A replica that finds the lock taken exports nothing this time: the holder's
    /// batch has the keys. If `write` throws, nothing is recorded.
    ///
    /// `write` runs again if the transaction loses a race with another session (PostgreSQL), so it
    /// must replace any file it wrote the first time, which it does when the name depends only
    /// on the batch's span.
    /// - Returns: the name `write` gave, or nil when nothing was exported.
    package func exportBatch(now: UnixTime, write: @Sendable (PendingExport) throws -> ExportedFile) throws -> String? {
        try database.transaction { () throws -> String? in
            guard try database.lock(.export, wait: false) else { return nil }
            let pending = try pendingExport(now: now)
            guard !pending.isEmpty else { return nil }
            let file = try write(pending)
            let name = file.name
            try database.query(
                "INSERT INTO export_file (name, data, etag, created) VALUES (?1, ?2, ?3, ?4)",
                [.text(name), .blob(file.bytes), .text(ExportFiles.entityTag(file.bytes)), .integer(now.seconds)])
            let batch =
                try database.query(
                    "INSERT INTO export_batch (start, end_time, name, keys, created) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                    [
                        .integer(pending.start.seconds), .integer(now.seconds), .text(name), .integer(Int64(pending.keys.count + pending.revised.count)),
                        .integer(now.seconds),
                    ]
                ).first?.first ?? .null
            try mark(pending.keys, column: "exported_batch", batch: batch)
            try mark(pending.revised, column: "revision_exported_batch", batch: batch)
            return name
        }
    }

    /// Records `keys` as exported in `batch`, by name rather than by a condition: a key published
    /// meanwhile is not in the file, so it must not be marked. In statements of 500 keys, since a
    /// statement per key costs a round trip each on PostgreSQL (100,000 keys took 18 s that way).
    private func mark(_ keys: [StoredKey], column: String, batch: DatabaseValue) throws(DatabaseError) {
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(keys.count, start + 500)]
            let placeholders = (0..<chunk.count).map { "?\($0 + 2)" }.joined(separator: ", ")
            try database.query(
                "UPDATE exposure SET \(column) = ?1 WHERE key IN (\(placeholders))", [batch] + chunk.map { .blob($0.key.keyData.bytes) })
            start += chunk.count
        }
    }

    /// Keys (and revisions) a batch holds at most: what one file may hold. The rest wait for the
    /// next run, whose file then carries them (a file over the limit would be refused by every
    /// reader, gaend's and GMS's).
    package static let maximumBatchKeys = 750_000
    /// Rows read per statement: the rows of a statement are held as values, about 200 bytes each;
    /// the keys kept are about 40.
    static let exportPage = 10_000

    /// The keys and revisions not exported yet whose embargo is over: revisions first, then keys
    /// up to `maximumBatchKeys` in all, read a page at a time in key order.
    private func pendingExport(now: UnixTime) throws(DatabaseError) -> PendingExport {
        func keys(_ sql: String, columns: String, limit: Int) throws(DatabaseError) -> [StoredKey] {
            var found = [StoredKey]()
            // Keyset pagination on the primary key: every non-empty key sorts after the empty one.
            var after = [UInt8]()
            while found.count < limit {
                let wanted = min(Self.exportPage, limit - found.count)
                let rows = try database.query(
                    "SELECT key, rolling_start, rolling_period, \(columns) FROM exposure WHERE (\(sql)) AND key > ?2 ORDER BY key LIMIT \(wanted)",
                    [.integer(now.seconds), .blob(after)])
                for row in rows {
                    if let key = Self.storedKey(row) { found.append(key) }
                }
                guard rows.count == wanted, let last = rows.last?[0].blob else { break }
                after = last
            }
            return found
        }
        // An end before 1970 or past UnixTime's range starts no batch (its file names the start as
        // a uint64): the first batch's day back is taken instead.
        let lastEnd = try database.query("SELECT end_time FROM export_batch ORDER BY end_time DESC LIMIT 1").first?.first?.integer
            .flatMap { UnixTime(exactlySeconds: $0) }.flatMap { $0.seconds >= 0 ? $0 : nil }
        let revised = try keys(
            "exported_batch IS NOT NULL AND revised_report_type IS NOT NULL AND revision_exported_batch IS NULL AND export_after <= ?1",
            // A revision's own values (the reference's RevisedDaysSinceSymptomOnset and
            // RevisedTransmissionRisk); a revision stored before they were kept has its key's risk.
            columns: "COALESCE(revised_transmission_risk, transmission_risk), revised_report_type, revised_days_since_onset",
            limit: Self.maximumBatchKeys)
        return PendingExport(
            keys: try keys(
                "exported_batch IS NULL AND export_after <= ?1", columns: "transmission_risk, report_type, days_since_onset",
                limit: Self.maximumBatchKeys - revised.count),
            revised: revised, start: lastEnd ?? now.adding(seconds: -86_400))
    }

    /// A row as a key; nil for one no key file can carry (a damaged file, a replica with another
    /// schema): every conversion is checked, since the database is read, not trusted.
    private static func storedKey(_ row: [DatabaseValue]) -> StoredKey? {
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
