// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
public import SQLite

extension KeyStore {
    /// A key as exports carry it.
    public struct StoredKey: Sendable, Equatable {
        public var key: TemporaryExposureKey
        public var transmissionRisk: Int32
        public var reportType: Int32
        public var daysSinceOnsetOfSymptoms: Int32?
    }

    /// What the next batch holds: keys out of their embargo and not exported yet, and revisions
    /// likewise.
    public struct PendingExport: Sendable {
        public var keys: [StoredKey]
        public var revised: [StoredKey]
        public var isEmpty: Bool { keys.isEmpty && revised.isEmpty }
    }

    public func pendingExport(now: UnixTime) throws(SQLiteError) -> PendingExport {
        func keys(_ sql: String, reportColumn: String) throws(SQLiteError) -> [StoredKey] {
            try database.query(
                "SELECT key, rolling_start, rolling_period, transmission_risk, \(reportColumn), days_since_onset FROM exposure WHERE \(sql)",
                [.integer(now.seconds)]
            ).compactMap { row in
                guard let bytes = row[0].blob.flatMap(Bytes16.init), let start = row[1].integer, let period = row[2].integer,
                    let key = try? TemporaryExposureKey(
                        keyData: bytes, rollingStartIntervalNumber: ENIntervalNumber(rawValue: UInt32(start)), rollingPeriod: UInt32(period))
                else { return nil }
                return StoredKey(
                    key: key, transmissionRisk: Int32(row[3].integer ?? 0), reportType: Int32(row[4].integer ?? 1),
                    daysSinceOnsetOfSymptoms: row[5].integer.map { Int32($0) })
            }
        }
        return PendingExport(
            keys: try keys("exported_batch IS NULL AND export_after <= ?1", reportColumn: "report_type"),
            revised: try keys(
                "exported_batch IS NOT NULL AND revised_report_type IS NOT NULL AND revision_exported_batch IS NULL AND export_after <= ?1",
                reportColumn: "revised_report_type"))
    }

    /// Records a written batch and marks its keys exported (one transaction). `keys` and `revised`
    /// are what `pendingExport` returned for it.
    public func recordBatch(name: String, start: UnixTime, end: UnixTime, keys: [StoredKey], revised: [StoredKey], now: UnixTime) throws {
        try database.transaction { () throws -> Void in
            try database.query(
                "INSERT INTO export_batch (start, end, name, keys, created) VALUES (?1, ?2, ?3, ?4, ?5)",
                [.integer(start.seconds), .integer(end.seconds), .text(name), .integer(Int64(keys.count + revised.count)), .integer(now.seconds)])
            let batch = try database.query("SELECT last_insert_rowid()").first?.first ?? .null
            for key in keys {
                try database.query("UPDATE exposure SET exported_batch = ?2 WHERE key = ?1", [.blob(key.key.keyData.bytes), batch])
            }
            for key in revised {
                try database.query("UPDATE exposure SET revision_exported_batch = ?2 WHERE key = ?1", [.blob(key.key.keyData.bytes), batch])
            }
        }
    }

    /// The batches, oldest first: (name, start, end).
    public func batches() throws(SQLiteError) -> [(name: String, start: UnixTime, end: UnixTime)] {
        try database.query("SELECT name, start, end FROM export_batch ORDER BY end, name").compactMap { row in
            guard let name = row[0].text, let start = row[1].integer, let end = row[2].integer else { return nil }
            return (name, UnixTime(seconds: start), UnixTime(seconds: end))
        }
    }

    /// Forgets batches that ended before `cutoff`, and keys whose intervals ended before it.
    public func deleteBefore(_ cutoff: UnixTime) throws -> [String] {
        try database.transaction { () throws -> [String] in
            let names = try database.query("SELECT name FROM export_batch WHERE end < ?1", [.integer(cutoff.seconds)]).compactMap { $0.first?.text }
            try database.query("DELETE FROM export_batch WHERE end < ?1", [.integer(cutoff.seconds)])
            let cutoffInterval = cutoff.seconds / ENIntervalNumber.seconds
            try database.query("DELETE FROM exposure WHERE rolling_start + rolling_period < ?1", [.integer(cutoffInterval)])
            return names
        }
    }
}
