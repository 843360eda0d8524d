// SPDX-License-Identifier: GPL-3.0-or-later

public import ENCore
import Foundation
public import SQLite

/// The key server's published keys in SQLite (one file, nothing to set up). One actor owns the
/// connection; each publish is one transaction, so a refused request stores nothing.
///
/// Revision follows the reference server: a publish returns a token naming its keys; a later
/// publish of the same keys (a likely diagnosis confirmed, or revoked) must present it, and a key
/// is revised once at most.
public actor KeyStore {
    let database: SQLiteDatabase

    public init(path: String) throws(SQLiteError) {
        database = try SQLiteDatabase(path: path)
        try database.execute(Self.schema)
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS exposure (
            key BLOB PRIMARY KEY CHECK (length(key) = 16),
            rolling_start INTEGER NOT NULL,
            rolling_period INTEGER NOT NULL CHECK (rolling_period BETWEEN 1 AND 144),
            transmission_risk INTEGER NOT NULL CHECK (transmission_risk BETWEEN 0 AND 8),
            report_type INTEGER NOT NULL,
            days_since_onset INTEGER,
            health_authority TEXT NOT NULL,
            traveler INTEGER NOT NULL DEFAULT 0,
            export_after INTEGER NOT NULL,
            created INTEGER NOT NULL,
            revised_report_type INTEGER,
            revised_at INTEGER,
            exported_batch INTEGER,
            revision_exported_batch INTEGER
        );
        CREATE TABLE IF NOT EXISTS export_batch (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            start INTEGER NOT NULL,
            end INTEGER NOT NULL,
            name TEXT NOT NULL UNIQUE,
            keys INTEGER NOT NULL,
            created INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS exposure_export_after ON exposure (export_after);
        CREATE TABLE IF NOT EXISTS revision_token (
            token TEXT PRIMARY KEY,
            created INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS revision_token_key (
            token TEXT NOT NULL REFERENCES revision_token (token) ON DELETE CASCADE,
            key BLOB NOT NULL,
            PRIMARY KEY (token, key)
        );
        """

    /// What a publish stored.
    public struct Published: Sendable, Equatable {
        public var inserted: Int
        public var revised: Int
        public var revisionToken: String
    }

    /// Stores the accepted keys of one publish with `reportType` (1 confirmed, 2 clinical/likely,
    /// 3 self-report, 5 revoked).
    public func publish(
        _ keys: [PublishValidator.AcceptedKey], reportType: Int32, healthAuthority: String, traveler: Bool, revisionToken: String?, now: UnixTime
    ) throws(PublishError) -> Published {
        do {
            return try database.transaction { () throws -> Published in
                var inserted = 0
                var revised = 0
                let tokenKeys = try revisionToken.map { token throws -> Set<[UInt8]> in
                    let rows = try database.query("SELECT key FROM revision_token_key WHERE token = ?1", [.text(token)])
                    guard !rows.isEmpty else { throw PublishError(.invalidRevisionToken, "the revision token is not one this server issued") }
                    return Set(rows.compactMap { $0.first?.blob })
                }
                for accepted in keys {
                    let bytes = accepted.key.keyData.bytes
                    let existing = try database.query(
                        "SELECT report_type, revised_report_type FROM exposure WHERE key = ?1", [.blob(bytes)]
                    ).first
                    guard let existing else {
                        try database.query(
                            """
                            INSERT INTO exposure (key, rolling_start, rolling_period, transmission_risk, report_type, days_since_onset,
                                health_authority, traveler, export_after, created)
                            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                            """,
                            [
                                .blob(bytes), .integer(Int64(accepted.key.rollingStartIntervalNumber.rawValue)), .integer(Int64(accepted.key.rollingPeriod)),
                                .integer(Int64(accepted.transmissionRisk)), .integer(Int64(reportType)),
                                accepted.daysSinceOnsetOfSymptoms.map { .integer(Int64($0)) } ?? .null, .text(healthAuthority), .integer(traveler ? 1 : 0),
                                .integer(accepted.exportAfter.seconds), .integer(now.seconds),
                            ])
                        inserted += 1
                        continue
                    }
                    // A key seen before: a revision, which needs the token of the publish that had it.
                    guard let tokenKeys else { throw PublishError(.missingRevisionToken, "a key was published before: send its revision token") }
                    guard tokenKeys.contains(bytes) else { throw PublishError(.invalidRevisionToken, "the revision token does not cover a key") }
                    guard existing[1] == .null else { throw PublishError(.keyAlreadyRevised, "a key was already revised") }
                    let from = existing[0].integer ?? 0
                    // Only a clinical diagnosis (likely) may become confirmed or be revoked.
                    guard from == 2, reportType == 1 || reportType == 5 else {
                        throw PublishError(.invalidReportTypeTransition, "report type \(from) cannot become \(reportType)")
                    }
                    try database.query(
                        "UPDATE exposure SET revised_report_type = ?2, revised_at = ?3, export_after = ?4 WHERE key = ?1",
                        [.blob(bytes), .integer(Int64(reportType)), .integer(now.seconds), .integer(accepted.exportAfter.seconds)])
                    revised += 1
                }
                let token = Self.newToken()
                try database.query("INSERT INTO revision_token (token, created) VALUES (?1, ?2)", [.text(token), .integer(now.seconds)])
                for accepted in keys {
                    try database.query("INSERT INTO revision_token_key (token, key) VALUES (?1, ?2)", [.text(token), .blob(accepted.key.keyData.bytes)])
                }
                return Published(inserted: inserted, revised: revised, revisionToken: token)
            }
        } catch let error as PublishError {
            throw error
        } catch {
            throw PublishError(.internalError, "storing the keys: \(error)")
        }
    }

    /// Keys whose export time has come, within [start, end) of creation or revision, for an export batch.
    public func exportable(now: UnixTime) throws(SQLiteError) -> Int {
        try database.query("SELECT count(*) FROM exposure WHERE export_after <= ?1", [.integer(now.seconds)]).first?.first?.integer.map(Int.init) ?? 0
    }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }
}
